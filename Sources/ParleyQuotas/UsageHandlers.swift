import Foundation
import ParleyAPI
import ParleyHTTP
import ParleyStore

/// `GET /api/usage?from=&to=`: the caller's own token usage per UTC day and model (counts only).
/// Days are `YYYY-MM-DD`, both ends included; `to` defaults to today and `from` to 29 days before
/// `to`. At most `PARLEY_USAGE_MAX_DAYS` days per request.
package struct UsageHandlers: Sendable {
    let store: Store
    let maxDays: Int
    var now: @Sendable () -> Date = Date.init

    package init(store: Store, maxDays: Int, now: @escaping @Sendable () -> Date = Date.init) {
        self.store = store
        self.maxDays = maxDays
        self.now = now
    }

    package func report(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let today = Int64(floor(now().timeIntervalSince1970 / 86_400))
        let to = try request.query["to"].map { (text) throws(HTTPError) in try Self.day(text, field: "to") } ?? today
        let from = try request.query["from"].map { (text) throws(HTTPError) in try Self.day(text, field: "from") }
            ?? to - 29
        guard from <= to else {
            throw HTTPError(status: 400, code: "invalid_request", message: "'from' must not be after 'to'.")
        }
        guard to - from < Int64(maxDays) else {
            throw HTTPError(status: 400, code: "invalid_request",
                            message: "At most \(maxDays) days per request (PARLEY_USAGE_MAX_DAYS).")
        }
        let rows = try store.usage(userID: caller.userID, days: from...to)
        let total = rows.reduce(TokenUsage()) { $0 + $1.usage }
        return .json(UsageReportResource(
            from: Self.format(from), to: Self.format(to),
            days: rows.map { UsageReportResource.Day(day: Self.format($0.day), model: $0.model, usage: $0.usage) },
            total: TokenUsageResource(total)))
    }

    /// `YYYY-MM-DD` (a real calendar day) as days since 1970; 400 naming the field otherwise.
    static func day(_ text: String, field: String) throws(HTTPError) -> Int64 {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let year = Int(parts[0]), let month = Int(parts[1]), let dayOfMonth = Int(parts[2]),
              year >= 1970, (1...12).contains(month), (1...31).contains(dayOfMonth) else {
            throw HTTPError(status: 400, code: "invalid_request", message: "'\(field)' must be a day as YYYY-MM-DD.")
        }
        var parts_ = tm()
        parts_.tm_year = Int32(year - 1900)
        parts_.tm_mon = Int32(month - 1)
        parts_.tm_mday = Int32(dayOfMonth)
        let seconds = timegm(&parts_)
        let days = Int64(seconds) / 86_400
        // timegm normalises 2026-02-31 to March: such a day does not exist.
        guard format(days) == text else {
            throw HTTPError(status: 400, code: "invalid_request", message: "'\(field)' is not a calendar day.")
        }
        return days
    }

    /// Days since 1970 as `YYYY-MM-DD` (UTC).
    static func format(_ day: Int64) -> String {
        String(Timestamp.format(Date(timeIntervalSince1970: TimeInterval(day) * 86_400)).prefix(10))
    }
}
