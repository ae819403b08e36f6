import CLibPQ
import Glibc

/// One PostgreSQL connection (libpq) with its prepared statements: what the store runs its SQL on
/// behind `PARLEY_DATABASE_URL` (issue 24).
///
/// Not thread-safe, like `SQLiteDatabase`: the store keeps each connection inside an `ExclusiveAccess`,
/// so exactly one thread uses it at a time. The SQL keeps SQLite's `?` / `?NNN` placeholders:
/// `PostgresPlaceholders` rewrites each distinct SQL once, and it is prepared once per connection
/// (`PQprepare`), then run with `PQexecPrepared`; parameters and results travel as text.
///
/// A lost connection (PostgreSQL restarted, the session terminated) is seen before the next call and
/// re-established once, outside a transaction; a call the server refused because it was ending the
/// session (SQLSTATE class 57P: nothing ran) is retried once on a new session. Otherwise the call throws
/// `StoreError.unavailable`, and so does every call while PostgreSQL cannot be reached.
///
/// Transactions: `immediate` is a plain (read committed) `BEGIN`, for writes; `deferred` reads from
/// one snapshot (`REPEATABLE READ, READ ONLY`). With a `searchIndexer`, a write transaction indexes
/// the search documents it queued just before its `COMMIT`.
final class PostgresDatabase: Database {
    let dialect = SQLDialect.postgres
    private let connection: OpaquePointer
    private let info: PostgresConnectionInfo
    /// Prepared statements by the store's SQL text; emptied when the session is re-established.
    private var statements: [String: PreparedStatement] = [:]
    /// Names prepared statements uniquely on this connection.
    private var prepareCount = 0
    /// Set inside `transaction`: a lost connection then fails the call (the transaction is gone)
    /// instead of quietly going on in a new session outside it.
    private var inTransaction = false
    /// After a failed reconnect, calls until then fail at once instead of each waiting on a connect.
    private var reconnectNotBefore: ContinuousClock.Instant?
    /// Set on the store's writer once the schema is migrated: every write transaction indexes the
    /// search documents its triggers queued before it commits (migration 6).
    var searchIndexer: PostgresSearchIndexer?

    /// A statement prepared on this connection's current session.
    private struct PreparedStatement {
        let name: String
        let parameterCount: Int
    }

    /// Connects to `url` (`postgres://` or `postgresql://`, anything libpq's URLs take), with
    /// `client_encoding` UTF8 and `applicationName` as the session's `application_name` (it shows in
    /// `pg_stat_activity`). A server that cannot be reached throws `unavailable`.
    init(url: String, applicationName: String) throws(StoreError) {
        let info = try PostgresConnectionInfo(url: url)
        // expand_dbname: the URL's settings land where `dbname` is; later entries override them.
        let settings = [("connect_timeout", "5"), ("dbname", url), ("application_name", applicationName),
                        ("client_encoding", "UTF8")]
        let keywords = settings.map { strdup($0.0) }
        let values = settings.map { strdup($0.1) }
        defer { (keywords + values).forEach { free($0) } }
        let connection = PQconnectdbParams(
            keywords.map { UnsafePointer($0) } + [nil], values.map { UnsafePointer($0) } + [nil], 1)
        guard let connection else { throw StoreError.unavailable("out of memory connecting to \(info.redactedURL)") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let why = info.scrub(String(cString: PQerrorMessage(connection)))
            PQfinish(connection)
            throw StoreError.unavailable("cannot connect to \(info.redactedURL): \(why)")
        }
        // libpq prints NOTICEs (e.g. "relation already exists, skipping") on stderr by default.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        self.connection = connection
        self.info = info
    }

    deinit {
        PQfinish(connection)
    }

    // MARK: - Running SQL

    /// Runs a script of one or more statements without parameters (migrations). Not prepared.
    func execute(_ script: String) throws(StoreError) {
        _ = try withSession { () throws(StoreError) -> PostgresResult in
            try checked(PQexec(connection, script)).get()
        }
    }

    /// Runs one statement to completion; returns the number of rows it changed (`PQcmdTuples`).
    @discardableResult
    func run(_ sql: String, _ arguments: [SQLValue] = []) throws(StoreError) -> Int {
        try result(of: sql, arguments).changedRows
    }

    /// Runs one statement and decodes every row it returns.
    func query<T>(
        _ sql: String, _ arguments: [SQLValue] = [], _ decode: (Row) throws(StoreError) -> T
    ) throws(StoreError) -> [T] {
        let result = try result(of: sql, arguments)
        defer { withExtendedLifetime(result) {} }  // the rows point into it
        var values: [T] = []
        values.reserveCapacity(Int(result.rowCount))
        for index in 0..<result.rowCount {
            values.append(try decode(Row(postgres: result.row(index))))
        }
        return values
    }

    /// Runs one statement and decodes its first row, if any. The statement always runs to completion
    /// (PostgreSQL sends every row), so a `RETURNING` write completes every change.
    func queryFirst<T>(
        _ sql: String, _ arguments: [SQLValue] = [], _ decode: (Row) throws(StoreError) -> T
    ) throws(StoreError) -> T? {
        let result = try result(of: sql, arguments)
        defer { withExtendedLifetime(result) {} }
        guard result.rowCount > 0 else { return nil }
        return try decode(Row(postgres: result.row(0)))
    }

    // MARK: - Transactions

    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws. A transaction
    /// that a failed statement aborted (its error caught inside `body`) is rolled back and throws
    /// SQLSTATE 25P02: PostgreSQL would answer its `COMMIT` with a silent `ROLLBACK`.
    func transaction<T>(
        _ mode: TransactionMode, _ body: () throws(StoreError) -> T
    ) throws(StoreError) -> T {
        guard !inTransaction else {
            throw StoreError.postgres(sqlstate: "25001", message: "a transaction is already in progress")
        }
        try execute(mode == .immediate ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        inTransaction = true
        defer { inTransaction = false }
        do throws(StoreError) {
            let value = try body()
            if PQtransactionStatus(connection) == PQTRANS_INERROR {
                throw StoreError.postgres(
                    sqlstate: "25P02", message: "the transaction was aborted by a failed statement; nothing was committed")
            }
            if mode == .immediate, let searchIndexer {
                try searchIndexer.indexQueued(on: self)
            }
            try execute("COMMIT")
            return value
        } catch {
            if PQstatus(connection) == CONNECTION_OK, PQtransactionStatus(connection) != PQTRANS_IDLE {
                _ = try? execute("ROLLBACK")
            }
            throw error
        }
    }

    /// Runs `body` in a savepoint of the open transaction (`SharedCommits`): if it throws, its changes
    /// alone are undone (a failed statement's abort included) and its error is the result, and the
    /// transaction goes on. Throws only when the transaction cannot go on: the connection is lost, or
    /// the savepoint could not be taken or undone.
    func savepoint<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> Result<T, StoreError> {
        try execute("SAVEPOINT shared_write")
        do {
            let value = try body()
            try execute("RELEASE SAVEPOINT shared_write")
            return .success(value)
        } catch {
            let state = PQtransactionStatus(connection)
            guard PQstatus(connection) == CONNECTION_OK, state == PQTRANS_INTRANS || state == PQTRANS_INERROR else {
                throw error
            }
            try execute("ROLLBACK TO SAVEPOINT shared_write; RELEASE SAVEPOINT shared_write")
            return .failure(error)
        }
    }

    /// Runs `body` holding PostgreSQL's session advisory lock `key` (waiting for it): the nodes that
    /// start at once take turns, so migrations run once. The lock goes with the session, so a node
    /// that dies holding it frees it.
    func withAdvisoryLock<T>(key: Int64, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try run("SELECT pg_advisory_lock(?::bigint)", [.integer(key)])
        do {
            let value = try body()
            try run("SELECT pg_advisory_unlock(?::bigint)", [.integer(key)])
            return value
        } catch {
            _ = try? run("SELECT pg_advisory_unlock(?::bigint)", [.integer(key)])
            throw error
        }
    }

    // MARK: - Statements and sessions

    /// Runs the prepared statement for `sql` with `arguments`.
    private func result(of sql: String, _ arguments: [SQLValue]) throws(StoreError) -> PostgresResult {
        let parameters = try PostgresParameters(arguments)
        return try withSession { () throws(StoreError) -> PostgresResult in
            let statement = try prepared(sql)
            return try parameters.withValues { values, lengths, formats in
                checked(PQexecPrepared(connection, statement.name, parameters.count, values, lengths, formats, 0))
            }.get()
        }
    }

    /// The statement prepared for `sql` on this session, prepared on first use. The SQL strings are
    /// made in this module from literals, so the cache is bounded as `SQLiteDatabase`'s is.
    private func prepared(_ sql: String) throws(StoreError) -> PreparedStatement {
        if let statement = statements[sql] { return statement }
        let rewritten = PostgresPlaceholders(rewriting: sql)
        prepareCount += 1
        let statement = PreparedStatement(name: "parley_\(prepareCount)", parameterCount: rewritten.parameterCount)
        _ = try checked(PQprepare(connection, statement.name, rewritten.sql, 0, nil)).get()
        statements[sql] = statement
        return statement
    }

    private func checked(_ result: OpaquePointer?) -> Result<PostgresResult, StoreError> {
        PostgresResult.checked(result, connection: connection, info: info)
    }

    /// Runs `call` on a live session: re-establishes a lost one first (outside a transaction), and
    /// retries once when the server ended the session before running anything (SQLSTATE 57P01
    /// admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now).
    private func withSession<T>(_ call: () throws(StoreError) -> T) throws(StoreError) -> T {
        try ensureSession()
        do {
            return try call()
        } catch {
            if !inTransaction, PQstatus(connection) == CONNECTION_OK, case .postgres("0A000", let message) = error,
               message.contains("cached plan") {
                // A table changed under a prepared statement (another node migrated): prepare again.
                _ = PQexec(connection, "DEALLOCATE ALL").map(PQclear)
                statements.removeAll()
                return try call()
            }
            guard PQstatus(connection) == CONNECTION_BAD else { throw error }
            guard !inTransaction, case .postgres(let sqlstate, _) = error, sqlstate.hasPrefix("57P") else {
                throw lost(error)
            }
            try reconnect()
            do {
                return try call()
            } catch {
                throw lost(error)
            }
        }
    }

    /// Makes sure the session is live before a call: reads whatever the server sent while the
    /// connection sat idle (a zero-timeout `poll`, then `PQconsumeInput` while there is more), so a
    /// session the server has already ended (its FATAL message, then the close, wait there) is seen
    /// as lost before a statement is sent on it, when re-running it elsewhere is still safe.
    private func ensureSession() throws(StoreError) {
        var socket = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
        var reads = 0
        while reads < 4, PQstatus(connection) == CONNECTION_OK, socket.fd >= 0, poll(&socket, 1, 0) > 0 {
            _ = PQconsumeInput(connection)
            reads += 1
        }
        guard PQstatus(connection) != CONNECTION_OK else { return }
        guard !inTransaction else {
            throw StoreError.unavailable("the connection to \(info.redactedURL) was lost during a transaction")
        }
        try reconnect()
    }

    /// A new session on the same connection settings (`PQreset`); its prepared statements are new.
    /// While PostgreSQL is down, one attempt a second per connection: the calls between fail at once.
    private func reconnect() throws(StoreError) {
        if let notBefore = reconnectNotBefore, ContinuousClock.now < notBefore {
            throw StoreError.unavailable("cannot reach \(info.redactedURL) (the last attempt failed under a second ago)")
        }
        statements.removeAll()
        PQreset(connection)
        guard PQstatus(connection) == CONNECTION_OK else {
            reconnectNotBefore = ContinuousClock.now + .seconds(1)
            let why = info.scrub(String(cString: PQerrorMessage(connection)))
            throw StoreError.unavailable("cannot reconnect to \(info.redactedURL): \(why)")
        }
        reconnectNotBefore = nil
    }

    /// `error` as `unavailable` when it came with the loss of the connection.
    private func lost(_ error: StoreError) -> StoreError {
        guard PQstatus(connection) == CONNECTION_BAD else { return error }
        return .unavailable("the connection to \(info.redactedURL) was lost: \(error)")
    }
}
