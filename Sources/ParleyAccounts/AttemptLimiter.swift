import Foundation
import Synchronization

/// Counts sign-in attempts per key (a username, a client address) in fixed windows, so guessing
/// passwords costs a window's wait after `limit` tries. An attempt is counted when it begins, before
/// the slow password check, so guesses sent all at once cannot all pass; a success gives it back.
///
/// Thread-safe (one mutex). Memory is bounded: ended windows are dropped, and past `maxKeys` the
/// oldest windows go first.
package final class AttemptLimiter: Sendable {
    private struct Window {
        var start: Date
        var attempts: Int
    }

    private let limit: Int
    private let window: TimeInterval
    private let maxKeys: Int
    private let windows = Mutex<[String: Window]>([:])

    package init(limit: Int, window: TimeInterval, maxKeys: Int = 10_000) {
        self.limit = limit
        self.window = window
        self.maxKeys = maxKeys
    }

    /// Takes one attempt for every key at once. Returns nil when allowed (the attempt now counts),
    /// or the seconds to wait when any key has used up its window (then nothing is counted).
    func begin(_ keys: [String], now: Date) -> Int? {
        windows.withLock { windows in
            var wait = 0
            for key in keys {
                guard let current = windows[key], now.timeIntervalSince(current.start) < window,
                      current.attempts >= limit else { continue }
                wait = max(wait, max(1, Int((window - now.timeIntervalSince(current.start)).rounded(.up))))
            }
            if wait > 0 { return wait }
            for key in keys {
                if var current = windows[key], now.timeIntervalSince(current.start) < window {
                    current.attempts += 1
                    windows[key] = current
                } else {
                    windows[key] = Window(start: now, attempts: 1)
                }
            }
            if windows.count > maxKeys { prune(&windows, now: now) }
            return nil
        }
    }

    /// The attempt succeeded: each key gets it back, and the `clearing` ones forget every failure
    /// (a user who signed in; not their address, which may try many names).
    package func succeeded(_ keys: [String], clearing: Set<String> = []) {
        windows.withLock { windows in
            for key in keys {
                if clearing.contains(key) {
                    windows[key] = nil
                } else if var current = windows[key] {
                    current.attempts = max(0, current.attempts - 1)
                    windows[key] = current
                }
            }
        }
    }

    private func prune(_ windows: inout [String: Window], now: Date) {
        windows = windows.filter { now.timeIntervalSince($0.value.start) < window }
        guard windows.count > maxKeys else { return }
        let oldest = windows.sorted { $0.value.start < $1.value.start }.prefix(windows.count - maxKeys)
        for (key, _) in oldest { windows[key] = nil }
    }
}
