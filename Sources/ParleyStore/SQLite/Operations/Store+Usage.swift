import Foundation

extension Store {
    // MARK: - Reading token usage (kept by the `usage_on_finish` trigger of migration 7)

    /// The token totals of these conversations, by id; a conversation with no finished reply is
    /// absent. No owner check: callers pass ids they have already read as the caller's. Read
    /// transaction, one primary-key row per id.
    public func usage(conversationIDs: [String]) throws(StoreError) -> [String: TokenUsage] {
        guard !conversationIDs.isEmpty else { return [:] }
        let marks = Array(repeating: "?", count: conversationIDs.count).joined(separator: ",")
        let rows = try read { (database) throws(StoreError) in
            try database.query(
                """
                SELECT conversation_id, input_tokens, output_tokens, replies, estimated_replies
                FROM conversation_usage WHERE conversation_id IN (\(marks))
                """,
                conversationIDs.map { .text($0) }) { row in (row.text(0), Self.tokenUsage(row, from: 1)) }
        }
        return Dictionary(rows) { first, _ in first }
    }

    /// The user's usage per UTC day and model for the days `from...to` (days since 1970), oldest
    /// day first, then by model. Read transaction over the primary key's range.
    public func usage(userID: String, days: ClosedRange<Int64>) throws(StoreError) -> [DailyUsage] {
        try read { (database) throws(StoreError) in
            try database.query(
                """
                SELECT day, model, input_tokens, output_tokens, replies, estimated_replies FROM usage_daily
                WHERE user_id = ? AND day BETWEEN ? AND ? ORDER BY day, model
                """,
                [.text(userID), .integer(days.lowerBound), .integer(days.upperBound)]) { row in
                DailyUsage(day: row.int64(0), model: row.text(1), usage: Self.tokenUsage(row, from: 2))
            }
        }
    }

    /// The user's token totals over all time (counts only: no title, no content), added in Swift with
    /// `TokenUsage`'s saturating `+`: SQLite's sum() raises "integer overflow" past Int64 (one row per
    /// day and model, so a few thousand rows at most). Read transaction.
    public func tokenTotals(userID: String) throws(StoreError) -> TokenUsage {
        try read { (database) throws(StoreError) in
            try database.query(
                """
                SELECT input_tokens, output_tokens, replies, estimated_replies
                FROM usage_daily WHERE user_id = ?
                """,
                [.text(userID)]) { row in Self.tokenUsage(row, from: 0) }
        }.reduce(TokenUsage(), +)
    }

    /// A row of totals. A column below 0 reads as 0: rows added up before migration 9 bounded each
    /// reply may hold a provider's negative figure (a REAL past Int64 already reads as Int64.max).
    private static func tokenUsage(_ row: Row, from first: Int32) -> TokenUsage {
        func count(_ column: Int32) -> Int { Int(max(row.int64(column), 0)) }
        return TokenUsage(inputTokens: count(first), outputTokens: count(first + 1),
                          replies: count(first + 2), estimatedReplies: count(first + 3))
    }
}
