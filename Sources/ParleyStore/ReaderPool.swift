import Synchronization

/// A fixed set of reader connections of either engine. Each read runs in one read transaction (one
/// consistent snapshot) on whichever connection is free; when all are busy it waits for one.
///
/// Thread-safe: each connection is used by one thread at a time (`ExclusiveAccess`). `Connection` is
/// `SQLiteDatabase` for the files database, `any Database` for the store.
final class ReaderPool<Connection>: Sendable {
    private let connections: [ExclusiveAccess<Connection>]
    private let nextConnection = Atomic<UInt>(0)
    /// Opens a read transaction on a connection and runs the body in it.
    private let transaction: @Sendable (Connection, () throws(StoreError) -> Void) throws(StoreError) -> Void

    /// A pool of `connections` (at least one), each read run inside `transaction`.
    init(
        _ connections: [Connection],
        transaction: @escaping @Sendable (Connection, () throws(StoreError) -> Void) throws(StoreError) -> Void
    ) {
        precondition(!connections.isEmpty, "a reader pool needs a connection")
        self.connections = connections.map { ExclusiveAccess($0) }
        self.transaction = transaction
    }

    /// Runs `body` in a read transaction on a free connection. Must not be called from inside
    /// another `read` body (a full pool would wait on itself).
    func read<T>(_ body: (Connection) throws(StoreError) -> T) throws(StoreError) -> T {
        let inTransaction = { (database: Connection) throws(StoreError) -> T in
            var result: T?
            try self.transaction(database) { () throws(StoreError) in result = try body(database) }
            guard let result else { throw StoreError.conflict("a read transaction ended without its result") }
            return result
        }
        let start = Int(nextConnection.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(connections.count))
        for offset in 0..<connections.count {
            let connection = connections[(start + offset) % connections.count]
            if let result = try connection.withLockIfAvailable(inTransaction) { return result }
        }
        return try connections[start].withLock(inTransaction)
    }
}

extension ReaderPool where Connection == SQLiteDatabase {
    /// `count` read-only SQLite connections to the file at `path`, each read one deferred transaction.
    convenience init(path: String, count: Int, busyTimeoutMilliseconds: Int32) throws(StoreError) {
        var connections: [SQLiteDatabase] = []
        for _ in 0..<count {
            connections.append(try SQLiteDatabase(
                path: path, readOnly: true, busyTimeoutMilliseconds: busyTimeoutMilliseconds))
        }
        self.init(connections) { (database, body) throws(StoreError) in
            try database.transaction(.deferred, body)
        }
    }
}
