import Synchronization

/// A fixed set of reader connections. Each read runs in one deferred transaction (one consistent
/// WAL snapshot) on whichever connection is free; when all are busy it waits for one.
///
/// Thread-safe: each connection is used by one thread at a time (`ExclusiveAccess`).
final class ReaderPool: Sendable {
    private let connections: [ExclusiveAccess<Database>]
    private let nextConnection = Atomic<UInt>(0)

    init(path: String, count: Int, busyTimeoutMilliseconds: Int32) throws(StoreError) {
        var connections: [ExclusiveAccess<Database>] = []
        for _ in 0..<count {
            connections.append(ExclusiveAccess(try Database(
                path: path, readOnly: true, busyTimeoutMilliseconds: busyTimeoutMilliseconds)))
        }
        self.connections = connections
    }

    /// Runs `body` in a read transaction on a free connection. Must not be called from inside
    /// another `read` body (a full pool would wait on itself).
    func read<T>(_ body: (Database) throws(StoreError) -> T) throws(StoreError) -> T {
        let transaction = { (database: Database) throws(StoreError) -> T in
            try database.transaction(.deferred) { () throws(StoreError) -> T in try body(database) }
        }
        let start = Int(nextConnection.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(connections.count))
        for offset in 0..<connections.count {
            let connection = connections[(start + offset) % connections.count]
            if let result = try connection.withLockIfAvailable(transaction) { return result }
        }
        return try connections[start].withLock(transaction)
    }
}
