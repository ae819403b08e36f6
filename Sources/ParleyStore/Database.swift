/// One connection to the store's database engine: SQLite (`SQLiteDatabase`, the embedded default) or
/// PostgreSQL (`PostgresDatabase`, `PARLEY_DATABASE_URL`).
///
/// This is the seam between the store's operations and its engines: every operation is written once,
/// as SQL both engines run, against this protocol; where the engines' SQL differs, the operation picks
/// its text by `dialect`. SQL keeps SQLite's `?` and `?NNN` placeholders (PostgreSQL's connection
/// rewrites them to `$n`).
///
/// Not thread-safe: the store keeps each connection inside an `ExclusiveAccess`, so exactly one thread
/// uses it at a time.
protocol Database: AnyObject {
    /// Which engine's SQL this connection speaks.
    var dialect: SQLDialect { get }

    /// Runs a script of one or more statements without parameters (migrations). Not cached.
    func execute(_ sql: String) throws(StoreError)

    /// Runs one statement to completion; returns the number of rows it changed.
    @discardableResult
    func run(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> Int

    /// Runs one statement and decodes every row it returns.
    func query<T>(
        _ sql: String, _ arguments: [SQLValue], _ decode: (Row) throws(StoreError) -> T
    ) throws(StoreError) -> [T]

    /// Runs one statement and decodes its first row, if any; the statement still runs to its end (so a
    /// `RETURNING` write completes every change).
    func queryFirst<T>(
        _ sql: String, _ arguments: [SQLValue], _ decode: (Row) throws(StoreError) -> T
    ) throws(StoreError) -> T?

    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws.
    func transaction<T>(
        _ mode: TransactionMode, _ body: () throws(StoreError) -> T
    ) throws(StoreError) -> T

    /// Runs `body` in a savepoint of the open transaction (`SharedCommits`): if it throws, its changes
    /// alone are undone and its error is the result, and the transaction goes on. Throws only when the
    /// transaction cannot go on.
    func savepoint<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> Result<T, StoreError>
}

extension Database {
    /// `run` without parameters.
    @discardableResult
    func run(_ sql: String) throws(StoreError) -> Int {
        try run(sql, [])
    }

    /// `query` without parameters.
    func query<T>(_ sql: String, _ decode: (Row) throws(StoreError) -> T) throws(StoreError) -> [T] {
        try query(sql, [], decode)
    }

    /// `queryFirst` without parameters.
    func queryFirst<T>(_ sql: String, _ decode: (Row) throws(StoreError) -> T) throws(StoreError) -> T? {
        try queryFirst(sql, [], decode)
    }
}

/// The SQL an engine speaks, for the few statements whose text differs between them.
enum SQLDialect: Sendable {
    case sqlite
    case postgres
}

/// How a transaction takes its locks: `immediate` takes the write lock at `BEGIN` (so a write
/// transaction never fails half-way on a lock upgrade), `deferred` reads from one snapshot.
enum TransactionMode: Sendable {
    case immediate
    case deferred
}
