/// A numbered, append-only step of the PostgreSQL schema (`PARLEY_DATABASE_URL`). The steps build the
/// same tables, columns, keys, cascades, triggers and indexes as SQLite's `Migration` list reaches at
/// its last step (v13), so the shared SQL of the store operations runs on both engines. They are
/// fewer: a PostgreSQL database starts empty, with no rows from older versions to carry forward.
///
/// Types: every integer column is `BIGINT` (SQLite's integers are 64-bit and the shared code reads
/// `int64`), reals are `DOUBLE PRECISION`, flags stay `BIGINT` 0/1 (the shared SQL binds and compares
/// them as integers), file bytes are `BYTEA` chunks in `blob_chunks` of the same database
/// (`PostgresBlobs`). SQLite's triggers are plpgsql functions with the same effect. Only extensions
/// PostgreSQL 15 marks trusted are used (none so far), as Parley runs as the database's owner, not a
/// superuser.
///
/// `schema_migrations` records each applied version. Never edit or reorder a shipped step: add one.
struct PostgresMigration: Sendable {
    let version: Int64
    let name: String
    let sql: String

    /// Every step in order: history and accounts (1), usage (2), search (3), files (4), search without
    /// GIN's pending list (5), trigrams made by Parley (6).
    static let all: [PostgresMigration] = [history, usage, search, files, searchWithoutPendingList, searchTrigramsByParley]

    /// The key of the transaction-level advisory lock every migrating node takes first, so that nodes
    /// starting at once apply each step once: the others wait, then find it recorded. ("PARLEY" + 1.)
    static let lockKey: Int64 = 0x5041_524C_4559_0001

    /// The table of applied steps, made on first use (under the lock, so concurrent nodes never race
    /// on the catalog).
    static let createTable = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version    BIGINT PRIMARY KEY,
            name       TEXT NOT NULL,
            applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
        )
        """

    /// Applies every step not in `schema_migrations`, in order, each in its own transaction under
    /// `pg_advisory_xact_lock(lockKey)`, with its row in `schema_migrations`: a crash leaves a
    /// consistent schema that the next start resumes, and a node that waited on the lock reads the
    /// versions again after taking it (PostgreSQL's default READ COMMITTED gives each statement a
    /// fresh snapshot), so it applies nothing twice. Throws `conflict` when the database holds a
    /// version this build does not know (a newer build migrated it).
    static func migrate(_ database: any Database) throws(StoreError) {
        while try applyNext(database) {}
    }

    /// Applies the first pending step; false when there was none. One transaction.
    private static func applyNext(_ database: any Database) throws(StoreError) -> Bool {
        try database.transaction(.immediate) { () throws(StoreError) -> Bool in
            try database.execute("SELECT pg_advisory_xact_lock(\(lockKey))")
            try database.execute(createTable)
            let applied = Set(try database.query("SELECT version FROM schema_migrations") { row in row.int64(0) })
            let known = Set(all.map(\.version))
            if let unknown = applied.subtracting(known).max() {
                throw StoreError.conflict(
                    "database schema version \(unknown) is newer than this build (\(known.max() ?? 0))")
            }
            guard let next = all.first(where: { !applied.contains($0.version) }) else { return false }
            try database.execute(next.sql)
            try database.run("INSERT INTO schema_migrations (version, name) VALUES (?, ?)",
                             [.integer(next.version), .text(next.name)])
            return true
        }
    }
}
