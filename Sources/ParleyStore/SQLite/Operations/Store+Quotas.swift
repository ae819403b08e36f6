import Foundation

extension Store {
    // MARK: - Daily output

    /// Output tokens of the user's reply runs that ended on the UTC day holding `date` (kept by the
    /// `daily_output_on_finish` trigger: the provider's `output_tokens`, or UTF-8 bytes / 4 without
    /// usage). Replies still streaming are not counted yet; a day added up before migration 9 bounded
    /// each reply may hold a provider's negative figure, read as 0. Read transaction, one primary-key row.
    public func outputTokens(userID: String, on date: Date) throws(StoreError) -> Int {
        let day = date.millisecondsSince1970 / 86_400_000
        return try read { (database) throws(StoreError) in
            try database.queryFirst("SELECT output_tokens FROM daily_output WHERE user_id = ? AND day = ?",
                                    [.text(userID), .integer(day)]) { Int(max($0.int64(0), 0)) } ?? 0
        }
    }
}
