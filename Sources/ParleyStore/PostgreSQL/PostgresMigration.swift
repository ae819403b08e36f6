/// STUB so branch pgconn builds on its own: the real numbered migrations are branch pgschema's
/// (same path). Drop this file when merging pgschema.
struct PostgresMigration: Sendable {
    static func migrate(_ database: Database) throws(StoreError) {}
}
