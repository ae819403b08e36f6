import Foundation
import ParleyAPI
import ParleyRedis
import Synchronization

/// Module ParleyCluster: what several Parley nodes share through Redis (PARLEY_REDIS_URL): the limits
/// counted for the whole cluster, and each user's notifications carried to every node. It must never
/// know HTTP routes, providers or SQL: it implements the small protocols the feature modules declare
/// (`MessageRateLimit`, `SignInAttempts`, `UserEventRelay`) on Redis.
///
/// The Redis side of one node: its connection pool, and whether Redis answered last time (logged once
/// per change, not once per refused request).
package final class SharedState: Sendable {
    package let pool: RedisConnectionPool
    /// Prefix of every key, so one Redis can hold other data (and tests can share one Redis).
    package let prefix: String
    private let down = Atomic<Bool>(false)

    /// - Parameter poolSize: connections for the quick commands (the followers have their own).
    package init(url: RedisURL, prefix: String = "parley:", poolSize: Int = 8) {
        pool = RedisConnectionPool(url: url, size: poolSize)
        self.prefix = prefix
    }

    /// Whether Redis answers a `PING` now (`/api/health`).
    package func isReachable() -> Bool {
        do {
            try pool.withConnection { connection throws(RedisError) in try connection.ping() }
            return true
        } catch {
            return false
        }
    }

    /// Runs `body` on a pooled connection; a Redis failure is logged (once until Redis answers again)
    /// and thrown as 503 `limits_unavailable`: what needs Redis is refused, never let through uncounted.
    package func counting<T>(_ body: (RedisConnection) throws(RedisError) -> T) throws -> T {
        do {
            let result = try pool.withConnection(body)
            if down.exchange(false, ordering: .relaxed) { Log.info("redis: reachable again (\(pool.url))") }
            return result
        } catch {
            noteFailure(error)
            throw APIErrors.limitsUnavailable
        }
    }

    /// Logs a Redis failure once until Redis answers again.
    package func noteFailure(_ error: RedisError) {
        if !down.exchange(true, ordering: .relaxed) {
            Log.info("redis: unreachable (\(error)); starts and sign-ins answer 503 limits_unavailable")
        }
    }

    /// A key of this cluster.
    package func key(_ parts: String...) -> String {
        prefix + parts.joined(separator: ":")
    }
}
