import Foundation
import Synchronization

/// A fixed set of connections to one Redis server, usable from any thread or task: each command
/// (or group of commands) runs on whichever connection is free, and waits for one when all are busy.
///
/// Bodies are synchronous and short (one round trip on a LAN is well under a millisecond), so a
/// task calls `withConnection` directly, holding its thread for that time: cheaper than an async hop,
/// and a body never waits on anything but Redis, so a full pool always drains. Long waits do not
/// belong here: `XREAD BLOCK` runs on a connection of its own (`makeConnection()`; see `xread`).
public final class RedisConnectionPool: Sendable {
    public let url: RedisURL
    private let connections: [Slot]
    private let nextConnection = Atomic<UInt>(0)
    private let connectTimeout: Duration
    private let commandTimeout: Duration

    /// Connects lazily: each connection on its first use, so a pool can be made before Redis is up.
    public init(url: RedisURL, size: Int, connectTimeout: Duration = .seconds(2), commandTimeout: Duration = .seconds(2)) {
        self.url = url
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        connections = (0..<max(1, size)).map { _ in
            Slot(RedisConnection(url: url, connectTimeout: connectTimeout, commandTimeout: commandTimeout))
        }
    }

    public var size: Int { connections.count }

    /// Runs `body` on a free connection (and throws what it throws). `body` must not let the connection escape, nor call
    /// `withConnection` again (a full pool would wait on itself).
    public func withConnection<T, Failure: Error>(_ body: (RedisConnection) throws(Failure) -> T) throws(Failure) -> T {
        let start = Int(nextConnection.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(connections.count))
        for offset in 0..<connections.count {
            if let result = try connections[(start + offset) % connections.count].withLockIfAvailable(body) {
                return result
            }
        }
        return try connections[start].withLock(body)
    }

    /// A new connection outside the pool, with the pool's URL and timeouts: for a blocking reader.
    /// The caller owns it (one thread at a time).
    public func makeConnection() -> RedisConnection {
        RedisConnection(url: url, connectTimeout: connectTimeout, commandTimeout: commandTimeout)
    }

    /// One connection and the lock that gives it to one thread at a time. `@unchecked Sendable` is
    /// sound because the connection is reachable only inside `withLock`/`withLockIfAvailable`, which
    /// hold the lock for the whole use (`Mutex` cannot hand its non-Sendable value to a caller's closure).
    private final class Slot: @unchecked Sendable {
        private let lock = NSLock()
        private let connection: RedisConnection

        init(_ connection: RedisConnection) {
            self.connection = connection
        }

        func withLock<T, Failure: Error>(_ body: (RedisConnection) throws(Failure) -> T) throws(Failure) -> T {
            lock.lock()
            defer { lock.unlock() }
            return try body(connection)
        }

        func withLockIfAvailable<T, Failure: Error>(_ body: (RedisConnection) throws(Failure) -> T) throws(Failure) -> T? {
            guard lock.try() else { return nil }
            defer { lock.unlock() }
            return try body(connection)
        }
    }
}
