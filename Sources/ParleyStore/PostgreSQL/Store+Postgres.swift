import Foundation

extension Store {
    /// Opens the PostgreSQL store at `location` and applies pending migrations (`PostgresMigration`:
    /// under an advisory lock, so nodes starting together migrate once). Connections: one writer, one
    /// per configured reader, and a writer and two readers for file bytes (`PostgresBlobs`).
    /// The role needs to own the database, not to be a superuser.
    public convenience init(
        postgres location: PostgresLocation, configuration: StoreConfiguration = StoreConfiguration(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(StoreError) {
        try configuration.validate()
        let open = { () throws(StoreError) -> any Database in
            try PostgresDatabase(url: location.url, applicationName: "parley")
        }
        let writer = try PostgresDatabase(url: location.url, applicationName: "parley")
        try PostgresMigration.migrate(writer)
        writer.searchIndexer = PostgresSearchIndexer()
        var readers: [any Database] = []
        for _ in 0..<configuration.readers {
            readers.append(try open())
        }
        let blobReaders = ReaderPool<any Database>([try open(), try open()]) { (database, body) throws(StoreError) in
            try database.transaction(.deferred, body)
        }
        try self.init(
            writer: writer, readers: readers, blobs: PostgresBlobs(writer: try open(), readers: blobReaders),
            checkpointer: nil, engineDescription: "PostgreSQL \(location)", configuration: configuration, now: now)
    }
}

extension Store {
    /// Whether the database answers now: always on SQLite (a file of this machine); a `SELECT 1` on a
    /// reader on PostgreSQL, so `/api/health` can say the store is down. Never throws.
    public func isReachable() -> Bool {
        guard checkpointer == nil else { return true }
        do {
            return try read { (database) throws(StoreError) in
                try database.queryFirst("SELECT 1", []) { $0.int64(0) } == 1
            }
        } catch {
            return false
        }
    }
}
