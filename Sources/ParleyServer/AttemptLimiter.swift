import Foundation
import Synchronization

/// Counts failed sign-ins per key (a username, a client address) in fixed windows, so guessing
/// passwords costs a window's wait after `limit` tries. Thread-safe (one mutex); memory is bounded
/// by dropping windows that have ended.
final class AttemptLimiter: Sendable {
    private struct Window {
        var start: Date
        var failures: Int
    }

    private let limit: Int
    private let window: TimeInterval
    private let windows = Mutex<[String: Window]>([:])

    init(limit: Int, window: TimeInterval) {
        self.limit = limit
        self.window = window
    }

    /// Seconds to wait before `key` may try again, or nil when it may try now.
    func retryAfter(_ key: String, now: Date = Date()) -> Int? {
        windows.withLock { windows in
            guard let current = windows[key], now.timeIntervalSince(current.start) < window,
                  current.failures >= limit else { return nil }
            return max(1, Int((window - now.timeIntervalSince(current.start)).rounded(.up)))
        }
    }

    func recordFailure(_ key: String, now: Date = Date()) {
        windows.withLock { windows in
            if windows.count > 10_000 {
                windows = windows.filter { now.timeIntervalSince($0.value.start) < window }
            }
            if var current = windows[key], now.timeIntervalSince(current.start) < window {
                current.failures += 1
                windows[key] = current
            } else {
                windows[key] = Window(start: now, failures: 1)
            }
        }
    }

    /// A success clears the username's count (not the address's: one address may try many names).
    func reset(_ key: String) {
        _ = windows.withLock { $0.removeValue(forKey: key) }
    }
}
