import Foundation
import Synchronization

/// One user's allowance of messages: `capacity` tokens, refilled continuously at `perSecond`; each
/// message takes one. A full bucket lets a burst of `capacity` through, then one per refill interval.
struct TokenBucket: Sendable, Equatable {
    let capacity: Double
    let perSecond: Double
    private(set) var tokens: Double
    private(set) var updated: TimeInterval

    /// A full bucket at time `now` (seconds on any monotonic clock).
    init(capacity: Int, perMinute: Int, now: TimeInterval) {
        self.capacity = Double(capacity)
        perSecond = Double(perMinute) / 60
        tokens = Double(capacity)
        updated = now
    }

    /// Takes one token. nil when there was one; otherwise the whole seconds until one is back
    /// (at least 1), and nothing is taken.
    mutating func take(now: TimeInterval) -> Int? {
        refill(now: now)
        if tokens >= 1 {
            tokens -= 1
            return nil
        }
        return max(1, Int(((1 - tokens) / perSecond).rounded(.up)))
    }

    /// Whether the bucket is full at `now` (then it is the same as a new one and can be dropped).
    mutating func isFull(now: TimeInterval) -> Bool {
        refill(now: now)
        return tokens >= capacity
    }

    private mutating func refill(now: TimeInterval) {
        // A clock never runs back here, but if it did, no tokens are made from it.
        let elapsed = max(0, now - updated)
        tokens = min(capacity, tokens + elapsed * perSecond)
        updated = max(updated, now)
    }
}

/// Messages per minute per user (PARLEY_USER_MESSAGES_PER_MINUTE): send, regenerate and continue
/// each take a token from the caller's `TokenBucket` (capacity = the rate).
///
/// Thread-safe (one mutex, held only for arithmetic). Memory is bounded: full buckets, which are the
/// same as absent ones, are dropped once many users are tracked.
final class MessageRateLimiter: Sendable {
    let perMinute: Int
    private let clock: @Sendable () -> TimeInterval
    private let buckets = Mutex<[String: TokenBucket]>([:])

    /// - Parameter clock: seconds on a monotonic clock (tests inject their own).
    init(perMinute: Int, clock: @escaping @Sendable () -> TimeInterval = MessageRateLimiter.uptime) {
        self.perMinute = perMinute
        self.clock = clock
    }

    /// Takes a token for `userID`: nil when the message may go, otherwise the whole seconds until it may.
    func take(_ userID: String) -> Int? {
        let now = clock()
        return buckets.withLock { buckets in
            if buckets.count > 10_000 {
                buckets = buckets.filter { _, bucket in
                    var bucket = bucket
                    return !bucket.isFull(now: now)
                }
            }
            var bucket = buckets[userID] ?? TokenBucket(capacity: perMinute, perMinute: perMinute, now: now)
            let wait = bucket.take(now: now)
            buckets[userID] = bucket
            return wait
        }
    }

    /// Seconds since boot: monotonic, unaffected by wall-clock changes.
    static let uptime: @Sendable () -> TimeInterval = {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1e9
    }
}
