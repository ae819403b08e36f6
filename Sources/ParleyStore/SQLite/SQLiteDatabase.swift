import CSQLite

/// One SQLite connection with its cache of prepared statements.
///
/// Not thread-safe by design: `Store` keeps each connection inside an `ExclusiveAccess` (the writer,
/// and each connection of the `ReaderPool`), so exactly one thread uses a connection at a time. That
/// is why it is opened with `SQLITE_OPEN_NOMUTEX`.
final class SQLiteDatabase: Database {
    var dialect: SQLDialect { .sqlite }

    /// The connection; outside this type only `IncrementalBlob` uses it (sqlite3_blob_* need it).
    let handle: OpaquePointer
    private var statements: [String: Statement] = [:]
    /// The object the WAL hook's context points to, kept alive as long as the connection.
    private var walListener: Checkpointer?
    /// The connection's search tokenizer: `Store.search` tells it whose rows a MATCH may find.
    let search: OwnedTrigramTokenizer

    /// How a writer connection keeps its file safe across a crash.
    enum Journal {
        /// WAL, `synchronous = NORMAL`: readers never wait for the writer; a commit survives a process
        /// crash (the main database).
        case wal
        /// A rollback journal (`TRUNCATE`), `synchronous = FULL`: appended pages are written once, and
        /// a commit is on the disk when it returns (the files database: see `FileBlobs`). If the file
        /// cannot leave WAL (another process has it open), it stays in WAL with `synchronous = FULL`,
        /// which keeps the same promise.
        case rollback
    }

    /// Opens (creating if needed) the file at `path`. A reader connection is `query_only`, so a bug
    /// can never write through it. `journal` matters to a writer only: readers follow the file's mode.
    init(path: String, readOnly: Bool, busyTimeoutMilliseconds: Int32, journal: Journal = .wal) throws(StoreError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let error = handle.map { StoreError.from(connection: $0, code: rc) }
                ?? StoreError.sqlite(code: rc, message: String(cString: sqlite3_errstr(rc)))
            sqlite3_close_v2(handle)
            throw error.opening(path)
        }
        self.handle = handle
        do {
            search = try OwnedTrigramTokenizer.register(on: handle)
        } catch {
            sqlite3_close_v2(handle)
            throw error.opening(path)
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        do {
            try configure(path: path, readOnly: readOnly, journal: journal)
        } catch {
            // SQLite's own messages ("unable to open database file") never say which file.
            throw error.opening(path)
        }
    }

    /// The pragmas every connection runs once opened.
    private func configure(path: String, readOnly: Bool, journal: Journal) throws(StoreError) {
        // READWRITE silently falls back to read-only on a file this user cannot write.
        if !readOnly, sqlite3_db_readonly(handle, "main") == 1 {
            throw StoreError.sqlite(code: SQLITE_READONLY, message: "the file is not writable by this user")
        }
        if !readOnly, journal == .rollback {
            // Best effort: see `Journal.rollback`.
            _ = try queryFirst("PRAGMA journal_mode = TRUNCATE") { row in row.text(0) }
            try execute("PRAGMA synchronous = FULL")
            try execute("PRAGMA foreign_keys = ON")
            return
        }
        // WAL lets readers run beside the one writer; synchronous=NORMAL still makes every
        // committed transaction survive a process crash (only an OS crash or power loss may
        // lose the last commits). journal_mode is persistent in the file, the rest per connection.
        if !readOnly {
            // The pragma answers with the mode in effect; a file system without shared memory
            // would silently keep the rollback journal, and readers would then block the writer.
            let mode = try queryFirst("PRAGMA journal_mode = WAL") { row in row.text(0) }
            guard mode?.lowercased() == "wal" else {
                throw StoreError.invalidConfiguration("\(path) cannot use WAL (journal mode \(mode ?? "unknown"))")
            }
        }
        try execute("PRAGMA synchronous = NORMAL")
        try execute("PRAGMA foreign_keys = ON")
        if readOnly {
            try execute("PRAGMA query_only = ON")
        }
    }

    deinit {
        statements.removeAll()  // finalize every statement before closing
        sqlite3_close_v2(handle)
    }

    // MARK: - Running SQL

    func execute(_ sql: String) throws(StoreError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw StoreError.from(connection: handle, code: rc) }
    }

    /// Runs one statement to completion; returns the number of rows it changed.
    @discardableResult
    func run(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> Int {
        let statement = try prepared(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step() {}
        return Int(sqlite3_changes64(handle))
    }

    /// Runs one statement and decodes every row it returns.
    func query<T>(
        _ sql: String, _ arguments: [SQLValue], _ decode: (Row) throws(StoreError) -> T
    ) throws(StoreError) -> [T] {
        let statement = try prepared(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        var results: [T] = []
        while try statement.step() {
            results.append(try decode(statement.row))
        }
        return results
    }

    /// Runs one statement and decodes its first row, if any. Any further rows are stepped through
    /// but not decoded (so a `RETURNING` write completes every change): decoding stops at one row.
    func queryFirst<T>(
        _ sql: String, _ arguments: [SQLValue], _ decode: (Row) throws(StoreError) -> T
    ) throws(StoreError) -> T? {
        let statement = try prepared(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        guard try statement.step() else { return nil }
        let value = try decode(statement.row)
        while try statement.step() {}  // finish the statement so a RETURNING write completes
        return value
    }

    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws.
    func transaction<T>(
        _ mode: TransactionMode, _ body: () throws(StoreError) -> T
    ) throws(StoreError) -> T {
        try run(mode == .immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 {
                _ = try? run("ROLLBACK")
            }
            throw error
        }
    }

    /// Runs `body` in a savepoint of the open transaction (`SharedCommits`): if it throws, its changes
    /// alone are undone and its error is the result, and the transaction goes on. Throws only when the
    /// transaction cannot go on: SQLite rolled all of it back (a full disk, an I/O error), or the
    /// savepoint could not be taken or undone.
    func savepoint<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> Result<T, StoreError> {
        try run("SAVEPOINT shared_write")
        do {
            let result = try body()
            try run("RELEASE shared_write")
            return .success(result)
        } catch {
            guard sqlite3_get_autocommit(handle) == 0 else { throw error }
            try run("ROLLBACK TO shared_write")
            try run("RELEASE shared_write")
            return .failure(error)
        }
    }

    // MARK: - Checkpoints

    /// After each commit, tells `checkpointer` the WAL's size in pages. Installing this hook turns
    /// SQLite's automatic checkpoint off (it is itself a WAL hook), so this connection's commits never
    /// run a checkpoint; `journal_size_limit` cuts the `-wal` file back to `limitPages` pages at the
    /// first commit after the WAL is reused.
    func reportWALSize(to checkpointer: Checkpointer, limitPages: Int) throws(StoreError) {
        let pageSize = try queryFirst("PRAGMA page_size") { row in row.int64(0) } ?? 4096
        try execute("PRAGMA journal_size_limit = \(pageSize * Int64(limitPages))")
        walListener = checkpointer
        sqlite3_wal_hook(handle, { context, connection, name, pages in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<Checkpointer>.fromOpaque(context).takeUnretainedValue()
            guard checkpointer.walGrew(toPages: Int(pages)), let connection else { return SQLITE_OK }
            // Past the bound: this commit copies the WAL itself, as SQLite's automatic checkpoint does.
            checkpointer.writerCheckpoints {
                var walPages: Int32 = 0
                var copied: Int32 = 0
                let rc = sqlite3_wal_checkpoint_v2(connection, name, SQLITE_CHECKPOINT_PASSIVE, &walPages, &copied)
                return rc == SQLITE_OK ? (Int(walPages), Int(copied)) : nil
            }
            return SQLITE_OK
        }, Unmanaged.passUnretained(checkpointer).toOpaque())
    }

    /// Runs one checkpoint of the main database; returns the WAL's size and how much of it is now
    /// copied into the database file, in pages.
    /// `PASSIVE`: copies what no reader still needs, and waits for no lock (the only mode the store uses).
    func checkpoint() throws(StoreError) -> (walPages: Int, checkpointedPages: Int) {
        var walPages: Int32 = 0
        var checkpointed: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(
            handle, "main", SQLITE_CHECKPOINT_PASSIVE, &walPages, &checkpointed)
        guard rc == SQLITE_OK else { throw StoreError.from(connection: handle, code: rc) }
        return (Int(walPages), Int(checkpointed))
    }

    /// The virtual machine steps the cached statement for `sql` has run since the last call (a
    /// measure of a query's work that does not depend on the machine's speed), and resets the count.
    func virtualMachineSteps(_ sql: String) -> Int {
        guard let statement = statements[sql] else { return 0 }
        return Int(sqlite3_stmt_status(statement.handle, SQLITE_STMTSTATUS_VM_STEP, 1))
    }

    // MARK: - Statement cache

    /// The cached statement for `sql`, prepared on first use. The SQL strings are made in this module
    /// from literals, so the cache is bounded by the distinct queries in the source and, for an `IN`
    /// list with one `?` per id (`usage(conversationIDs:)`), by the lengths its callers pass.
    private func prepared(_ sql: String) throws(StoreError) -> Statement {
        if let statement = statements[sql] { return statement }
        let statement = try Statement(connection: handle, sql: sql)
        statements[sql] = statement
        return statement
    }
}
