/// One overall time limit for a wait made of several steps (a reconnect loop, a poll), so a server
/// that never gets there fails the test after `limit` instead of stalling the run for the sum of
/// every step's own timeout.
///
///     let deadline = Deadline(.seconds(60))
///     while !done {
///         guard !deadline.hasPassed else { XCTFail("…"); break }
///         read(timeout: deadline.seconds(atMost: 20))
///     }
public struct Deadline: Sendable {
    public let limit: Duration
    private let end: ContinuousClock.Instant

    public init(_ limit: Duration) {
        self.limit = limit
        end = .now + limit
    }

    public var hasPassed: Bool { ContinuousClock.now >= end }

    public var remaining: Duration { max(.zero, end - .now) }

    /// The time left in seconds, capped at `cap` (for a step's own timeout); never below 0.05 s,
    /// so a step started just before the end still gets a chance to finish.
    public func seconds(atMost cap: Double) -> Double {
        let left = remaining
        let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
        return max(0.05, min(cap, seconds))
    }

    /// Polls `condition` every `interval` until it holds (true) or the deadline passes (false).
    public func wait(every interval: Duration = .milliseconds(5),
                     until condition: () async throws -> Bool) async rethrows -> Bool {
        while true {
            if try await condition() { return true }
            if hasPassed { return false }
            try? await Task.sleep(for: interval)
        }
    }
}
