/// A named, append-only schema step. `PRAGMA user_version` counts the steps applied, so the list
/// below may only grow: never edit or reorder a shipped migration, add a new one.
///
/// Room left for later steps: generated titles (`conversations.title` is plain text).
struct Migration: Sendable {
    let name: String
    let sql: String
    /// A step SQL text alone cannot take (it reads a value first), run after `sql` in the same transaction.
    var step: (@Sendable (SQLiteDatabase) throws(StoreError) -> Void)?

    init(name: String, sql: String, step: (@Sendable (SQLiteDatabase) throws(StoreError) -> Void)? = nil) {
        self.name = name
        self.sql = sql
        self.step = step
    }

    /// Every step in order: the message history (v1–v6), settings, usage, search and preferences
    /// (v7–v11), tools (v12), files (v13–).
    static let all: [Migration] = history + settingsUsageAndSearch + tools + files

    /// Applies every migration past the file's `user_version`, each in its own transaction with
    /// its version bump, so a crash mid-way leaves a consistent, resumable schema.
    static func migrate(_ database: SQLiteDatabase) throws(StoreError) {
        let applied = try database.queryFirst("PRAGMA user_version") { row in Int(row.int64(0)) } ?? 0
        guard applied <= all.count else {
            throw StoreError.conflict(
                "database schema version \(applied) is newer than this build (\(all.count))")
        }
        for (index, migration) in all.enumerated().dropFirst(applied) {
            try database.transaction(.immediate) { () throws(StoreError) in
                try database.execute(migration.sql)
                try migration.step?(database)
                try database.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }
}
