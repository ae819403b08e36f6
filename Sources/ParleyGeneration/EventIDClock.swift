import Foundation

/// Hands out event ids that only ever grow: the larger of the previous id + 1 and the current time in
/// microseconds. A continued generation, or one started after a crash, therefore never reuses an id a
/// browser may hold as its Last-Event-ID, without any counter having to be persisted.
/// (Microseconds since 1970 stay below 2^53 until the year 2255, so JavaScript reads them exactly.)
/// The one place this rule lives: a reply's events and the user notifications (`UserEventLog`) both
/// take their ids here.
public struct EventIDClock: Sendable {
    public private(set) var last: Int64

    public init(after last: Int64 = 0) {
        self.last = last
    }

    public mutating func next() -> Int64 {
        next(now: Self.now())
    }

    /// The next id when the clock reads `now` (microseconds since 1970).
    public mutating func next(now: Int64) -> Int64 {
        last = max(last + 1, now)
        return last
    }

    /// The clock now (microseconds since 1970).
    public static func now() -> Int64 {
        id(at: Date())
    }

    /// The id the clock gives at `date` (microseconds since 1970).
    public static func id(at date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970 * 1_000_000)
    }

    /// An id above every id issued before a message was written at `date` (stored with millisecond
    /// precision, hence the extra millisecond).
    static func ceiling(writtenAt date: Date) -> Int64 {
        id(at: date) + 1_000
    }
}
