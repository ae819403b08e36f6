import CSQLite
import Foundation

/// `parley migrate --from sqlite:PATH --to postgres://…`: copies a whole SQLite store (the main file and
/// the files database beside it) into an empty PostgreSQL database, then checks every table's rows.
///
/// Why it is built this way:
/// - **Nothing half-done.** The copy is one PostgreSQL transaction, under the schema migrations'
///   advisory lock: a failure (or a kill) rolls all of it back, and the same command runs again. A
///   target holding rows is refused before anything is written.
/// - **Stays right as the schemas grow.** Tables and columns are read from both catalogs (`PRAGMA
///   table_info`, `information_schema`) and the columns both have are copied, tables in the order the
///   target's foreign keys need (a tree's rows parents first). Data the target has no place for (a
///   table or a non-NULL column it lacks) is an error, never a silent loss.
/// - **Counters copied, not counted again.** The target's triggers (usage totals, search, file
///   release) are off during the copy (`DISABLE TRIGGER USER`: an owner may, a superuser is not
///   needed), so the usage tables hold exactly SQLite's totals. The search index, FTS5 in SQLite, is
///   rebuilt from the copied `search_documents`, so document ids (newest first) are SQLite's.
/// - **Ids kept.** Every row keeps its ids, file bytes keep their blob ids, and every identity or
///   serial sequence is moved past the largest copied id (and past SQLite's `AUTOINCREMENT` high mark).
///
/// Read the SQLite files from a stopped server (or a `parley backup` copy): the two files are read in
/// two snapshots, and a file deleted between them would lose its bytes.
public final class StoreMigration {
    /// One table to copy: the SQLite columns to read and the PostgreSQL columns they go to, in order.
    struct TablePlan {
        let name: String
        let sourceColumns: [String]
        let targetColumns: [String]
        /// The target has a `GENERATED ALWAYS` identity among the columns written.
        let overridingIdentity: Bool
        /// A foreign key to the table itself (`messages.parent_id`): rows are copied parents first.
        let parent: (key: String, reference: String)?
    }

    /// How the target keeps file bytes: `PostgresBlobs`' chunk tables, or one `bytea` row per file.
    enum BlobLayout {
        case chunks
        case whole
    }

    /// The derived tables rebuilt on the target, by name, and the SQL that rebuilds each from copied rows.
    static let rebuilds: [String: String] = [
        // SQLite v8's own rebuild, in PostgresMigration's terms: every document queued, then indexed by
        // `PostgresSearchIndexer` (migration 6), as a store write indexes what it queued.
        "search_index": """
            SELECT parley_search_queue(d.doc_id, d.owner_id, coalesce(m.content, c.title))
            FROM search_documents d
            LEFT JOIN messages m ON m.id = d.message_id
            LEFT JOIN conversations c ON c.id = d.conversation_id AND d.message_id IS NULL
            """,
    ]

    let source: SQLiteDatabase
    /// The files database (table `blobs`); nil when the SQLite store has none.
    let files: SQLiteDatabase?
    let target: any Database
    /// Why the copy stopped, when it is not an engine's failure (set before a rollback is thrown).
    var refusal: StoreMigrationError?

    private init(source: SQLiteDatabase, files: SQLiteDatabase?, target: any Database) {
        self.source = source
        self.files = files
        self.target = target
    }

    /// Copies the SQLite store at `path` into the (empty) PostgreSQL database at `location`, after
    /// applying this build's PostgreSQL migrations there. Throws with nothing committed, or returns
    /// every table's row counts (equal on both sides).
    public static func run(from path: String, to location: PostgresLocation) throws(StoreMigrationError)
        -> StoreMigrationReport {
        let clock = ContinuousClock()
        let start = clock.now
        let migration = try open(path, location)
        do {
            let (tables, bytes) = try migration.copy()
            let elapsed = clock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return StoreMigrationReport(tables: tables, fileBytes: bytes, seconds: seconds)
        } catch {
            throw migration.refusal ?? .store(error)
        }
    }

    // MARK: - Opening

    private static func open(_ path: String, _ location: PostgresLocation) throws(StoreMigrationError)
        -> StoreMigration {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw .sourceMissing(path: path)
        }
        let filesPath = FileBlobs.path(forDatabaseAt: path)
        let (source, files, version) = try storeCall { () throws(StoreError) in
            // A reader connection is query_only: nothing is ever written to the files copied from.
            let source = try SQLiteDatabase(path: path, readOnly: true, busyTimeoutMilliseconds: 5000)
            let version = try source.queryFirst("PRAGMA user_version") { row in Int(row.int64(0)) } ?? 0
            let files = FileManager.default.fileExists(atPath: filesPath)
                ? try SQLiteDatabase(path: filesPath, readOnly: true, busyTimeoutMilliseconds: 5000) : nil
            return (source, files, version)
        }
        guard version == Migration.all.count else {
            throw .sourceSchema(path: path, version: version, expected: Migration.all.count)
        }
        let target = try storeCall { () throws(StoreError) in
            try PostgresDatabase(url: location.url, applicationName: "parley-migrate")
        }
        let present = try storeCall { () throws(StoreError) in try tableNames(target) }
        if !present.isEmpty, !present.contains("schema_migrations") {
            throw .targetNotParley(tables: present)
        }
        try storeCall { () throws(StoreError) in try PostgresMigration.migrate(target) }
        return StoreMigration(source: source, files: files, target: target)
    }

    private static func storeCall<T>(_ body: () throws(StoreError) -> T) throws(StoreMigrationError) -> T {
        do {
            return try body()
        } catch {
            throw .store(error)
        }
    }

    /// The target's tables (its current schema), by name.
    static func tableNames(_ database: any Database) throws(StoreError) -> [String] {
        try database.query("""
            SELECT table_name FROM information_schema.tables
            WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name
            """) { row in row.text(0) }
    }

    // MARK: - Copying

    /// Reads both SQLite files each in one snapshot and writes the target in one transaction.
    private func copy() throws(StoreError) -> (tables: [MigratedTable], fileBytes: Int64) {
        try source.transaction(.deferred) { () throws(StoreError) in
            try inFilesSnapshot { () throws(StoreError) in
                let plan = try makePlan()
                return try target.transaction(.immediate) { () throws(StoreError) in
                    try target.execute("SELECT pg_advisory_xact_lock(\(PostgresMigration.lockKey))")
                    let written = plan.tables.map(\.name) + plan.rebuilt + plan.blobTables
                    try refuseRows(in: written)
                    for table in written {
                        try target.execute("ALTER TABLE \(Self.quoted(table)) DISABLE TRIGGER USER")
                    }
                    var report: [MigratedTable] = []
                    for table in plan.tables {
                        try copyRows(table)
                        report.append(try counted(table.name, transfer: .copied))
                    }
                    for table in plan.rebuilt {
                        try target.execute(Self.rebuilds[table] ?? "")
                        if table == "search_index" { try PostgresSearchIndexer().indexQueued(on: target) }
                        report.append(try counted(table, transfer: .rebuilt))
                    }
                    let files = try plan.blobLayout.map { (layout) throws(StoreError) in try copyBlobs(layout) }
                    report += files?.tables ?? []
                    try moveSequences(pastCopiedIn: written)
                    for table in written {
                        try target.execute("ALTER TABLE \(Self.quoted(table)) ENABLE TRIGGER USER")
                    }
                    let differing = report.filter { !$0.matches }
                    guard differing.isEmpty else { throw refuse(.countMismatch(differing)) }
                    return (report, files?.bytes ?? 0)
                }
            }
        }
    }

    private func inFilesSnapshot<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        guard let files else { return try body() }
        return try files.transaction(.deferred, body)
    }

    /// Records why the copy stops and returns the error that rolls the transaction back.
    func refuse(_ why: StoreMigrationError) -> StoreError {
        refusal = why
        return .conflict(why.description)
    }

    private func refuseRows(in tables: [String]) throws(StoreError) {
        var holding: [String] = []
        for table in tables where try target.queryFirst(
            "SELECT EXISTS (SELECT 1 FROM \(Self.quoted(table)))", { row in row.int64(0) == 1 }) == true {
            holding.append(table)
        }
        guard holding.isEmpty else { throw refuse(.targetNotEmpty(tables: holding)) }
    }

    /// Copies one table's rows in multi-row INSERTs of at most ~20,000 values, streaming from SQLite.
    private func copyRows(_ table: TablePlan) throws(StoreError) {
        let width = table.targetColumns.count
        let perStatement = max(1, min(500, 20_000 / max(width, 1)))
        var values: [SQLValue] = []
        values.reserveCapacity(perStatement * width)
        let insert = "INSERT INTO \(Self.quoted(table.name)) (\(table.targetColumns.map(Self.quoted).joined(separator: ", ")))"
            + (table.overridingIdentity ? " OVERRIDING SYSTEM VALUE" : "") + " VALUES "
        let tuple = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
        func flush() throws(StoreError) {
            guard !values.isEmpty else { return }
            let rows = values.count / width
            try target.run(insert + Array(repeating: tuple, count: rows).joined(separator: ", "), values)
            values.removeAll(keepingCapacity: true)
        }
        _ = try source.query(selectSQL(table), []) { (row) throws(StoreError) in
            for column in 0..<width {
                values.append(try Self.value(row, Int32(column)))
            }
            if values.count >= perStatement * width { try flush() }
        }
        try flush()
    }

    /// The SELECT of a table's rows; parents first (by depth from the roots) for a self-referencing one.
    private func selectSQL(_ table: TablePlan) -> String {
        let name = Self.quoted(table.name)
        let columns = table.sourceColumns.map { "t." + Self.quoted($0) }.joined(separator: ", ")
        guard let parent = table.parent else { return "SELECT \(columns) FROM \(name) t" }
        let key = Self.quoted(parent.key)
        let reference = Self.quoted(parent.reference)
        return """
            WITH RECURSIVE ordered (key, depth) AS (
                SELECT \(key), 0 FROM \(name) WHERE \(reference) IS NULL
                UNION ALL
                SELECT t.\(key), ordered.depth + 1 FROM \(name) t JOIN ordered ON t.\(reference) = ordered.key)
            SELECT \(columns) FROM \(name) t JOIN ordered ON t.\(key) = ordered.key ORDER BY ordered.depth
            """
    }

    /// A SQLite value as it is stored (its own type, not the column's declared one).
    static func value(_ row: Row, _ column: Int32) throws(StoreError) -> SQLValue {
        guard case .sqlite(let statement) = row.storage else { throw StoreError.corrupt("the source row is not SQLite's") }
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
        case SQLITE_TEXT: return .text(row.text(column))
        case SQLITE_BLOB: return .blob(row.optionalBytes(column) ?? [])
        default: return .null
        }
    }

    /// The table's rows on both sides.
    func counted(_ table: String, transfer: MigratedTable.Transfer) throws(StoreError) -> MigratedTable {
        let sql = "SELECT count(*) FROM \(Self.quoted(table))"
        return MigratedTable(
            name: table, sourceRows: try source.queryFirst(sql) { row in row.int64(0) } ?? 0,
            targetRows: try target.queryFirst(sql) { row in row.int64(0) } ?? 0, transfer: transfer)
    }

    /// Moves every identity and serial sequence of the written tables past the largest copied value, so
    /// the next row the store inserts gets a new id.
    private func moveSequences(pastCopiedIn tables: [String]) throws(StoreError) {
        let sequences = try target.query("""
            SELECT table_name, column_name, pg_get_serial_sequence(quote_ident(table_name), column_name)
            FROM information_schema.columns
            WHERE table_schema = current_schema()
              AND pg_get_serial_sequence(quote_ident(table_name), column_name) IS NOT NULL
            """) { row in (table: row.text(0), column: row.text(1), sequence: row.text(2)) }
        for entry in sequences where tables.contains(entry.table) {
            _ = try target.query(
                "SELECT setval(?::regclass, m) FROM (SELECT max(\(Self.quoted(entry.column))) AS m "
                    + "FROM \(Self.quoted(entry.table))) AS copied WHERE m IS NOT NULL",
                [.text(entry.sequence)]) { row in row.int64(0) }
        }
        try keepBlobIDsUnused(sequences.filter { $0.column == "id" && blobTable(named: $0.table) }
            .map { (table: $0.table, sequence: $0.sequence) })
    }

    /// `"name"`: an identifier quoted for either engine.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
