/// The id of a Redis stream entry, `milliseconds-sequence`, both 64-bit.
///
/// Parley's mapping: event `N` of a live reply (its per-message event id, a positive integer, the SSE
/// `id:` a browser sends back as `Last-Event-ID`) is stream entry `N-0`. So an SSE id *is* a Redis
/// position: a replay after `Last-Event-ID: N` is `XRANGE key (N-0 +` and a follow is `XREAD … N-0`,
/// with no table between the two. `N-0` rather than `0-N`: it reads as the event id, Redis orders by
/// the first part first, and the sequence part stays free should one event ever need several
/// entries (`N-1`, `N-2` sort between events `N` and `N+1`). Ids are always given to `XADD`
/// explicitly (never `*`, which would use the clock), and event ids grow per message, so a retried
/// `XADD` of event `N` is refused as "equal or smaller than the top item": retries are idempotent.
public struct RedisStreamID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var milliseconds: UInt64
    public var sequence: UInt64

    /// `0-0`: before every entry (`XREAD` from the start, `XRANGE` after nothing).
    public static let zero = RedisStreamID(milliseconds: 0, sequence: 0)

    public init(milliseconds: UInt64, sequence: UInt64) {
        self.milliseconds = milliseconds
        self.sequence = sequence
    }

    /// `N-0` for Parley event id `N`; nil unless `N` is positive (Redis refuses `0-0` in `XADD`).
    public init?(eventID: Int64) {
        guard eventID > 0 else { return nil }
        self.init(milliseconds: UInt64(eventID), sequence: 0)
    }

    /// The Parley event id this entry holds: `N` for `N-0`; nil for ids Parley does not write.
    public var eventID: Int64? {
        guard sequence == 0, milliseconds > 0, milliseconds <= UInt64(Int64.max) else { return nil }
        return Int64(milliseconds)
    }

    /// Reads `ms-seq` (or a bare `ms`, which Redis reads as `ms-0`); nil for anything else.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, let milliseconds = Self.number(first) else { return nil }
        var sequence: UInt64 = 0
        if parts.count == 2 {
            guard let value = Self.number(parts[1]) else { return nil }
            sequence = value
        }
        self.init(milliseconds: milliseconds, sequence: sequence)
    }

    public var description: String { "\(milliseconds)-\(sequence)" }

    public static func < (lhs: RedisStreamID, rhs: RedisStreamID) -> Bool {
        (lhs.milliseconds, lhs.sequence) < (rhs.milliseconds, rhs.sequence)
    }

    private static func number(_ text: some StringProtocol) -> UInt64? {
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return UInt64(text)
    }
}
