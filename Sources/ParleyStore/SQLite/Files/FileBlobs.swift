import CSQLite
import Foundation

/// The files database: uploaded bytes in `blobs(id, content, thumbnail, text)`, in a SQLite file of its
/// own beside the main one, so the conversation database stays small and quick to back up, and a
/// 20 MB write holds this file's writer lock, never the conversations' one.
///
/// Values are written and read with incremental blob I/O (`IncrementalBlob`) in chunks. `text` holds a
/// document's UTF-8 text as bytes (a BLOB, written like the content). Ids are `AUTOINCREMENT`, never
/// reused: a late removal of a released id can never hit a newer blob.
///
/// ## Durability
/// A rollback journal (`TRUNCATE`) with `synchronous = FULL` (`SQLiteDatabase.Journal.rollback`), not WAL: a
/// new blob's pages lie past the end of the file, so they are written once, into the file (the journal
/// holds only the few pages that existed before), where WAL wrote every page twice (the `-wal` file, then
/// the checkpoint). `insert` returns only once the blob is on the disk, before the row that names it is
/// written: whatever crash comes (process, OS, power), a row never names a blob that is not there. The
/// price is the `fdatasync` of the file (most of an upload's time on a slow disk) and the journal's
/// few small ones; see README, "Uploads and images".
///
/// ## Concurrency contract
/// Thread-safe. Writes run on this file's one writer connection under its own lock, each one
/// `BEGIN IMMEDIATE` transaction; reads run on its own reader pool, each one deferred transaction.
/// Without WAL, a read waits (busy timeout) while a commit writes its pages, and a commit waits for the
/// reads under way (each a chunk); `parley backup` reading this file holds commits back while it copies.
/// The main database's rows are the truth: a blob is written before the row that names it and removed
/// after that row is gone, so a crash leaves at worst an unreferenced blob, which the server's start
/// collects (`Store.collectOrphanFiles`).
final class FileBlobs: BlobStore {
    private let writer: ExclusiveAccess<SQLiteDatabase>
    private let readers: ReaderPool<SQLiteDatabase>
    /// The file's path.
    let path: String

    /// The schema versions this build knows; `PRAGMA user_version` counts them like `Migration`.
    private static let schema = [
        """
        CREATE TABLE blobs (
            id        INTEGER PRIMARY KEY AUTOINCREMENT,
            content   BLOB NOT NULL,
            thumbnail BLOB,
            text      BLOB    -- UTF-8 bytes of a document's text
        );
        """,
    ]

    /// The files database that goes with the main database at `databasePath`: `NAME.files.sqlite` beside
    /// it, where NAME is the main file's name without its extension (`parley.sqlite` -> `parley.files.sqlite`).
    static func path(forDatabaseAt databasePath: String) -> String {
        let url = URL(fileURLWithPath: databasePath)
        let name = url.pathExtension.isEmpty ? url.lastPathComponent : url.deletingPathExtension().lastPathComponent
        return url.deletingLastPathComponent().appendingPathComponent("\(name).files.sqlite").path
    }

    /// Opens (creating if needed) the files database at `path`.
    init(path: String, readers: Int, busyTimeoutMilliseconds: Int32) throws(StoreError) {
        let database = try SQLiteDatabase(path: path, readOnly: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
                                    journal: .rollback)
        // Takes effect in a new file only (before its first table): fewer, larger pages for what are
        // mostly whole files, so a 20 MB blob is 320 pages, not 5,000 (an older file keeps its size).
        try database.execute("PRAGMA page_size = 65536")
        // Said again after the page size: the connection's cache had counted SQLite's default 2,000 KiB in
        // 4 KiB pages (500), and kept 500 pages of 64 KiB (31 MiB) after the first upload into a new file.
        try database.execute("PRAGMA cache_size = -2000")
        let applied = try database.queryFirst("PRAGMA user_version") { row in Int(row.int64(0)) } ?? 0
        guard applied <= Self.schema.count else {
            throw StoreError.conflict(
                "files database schema version \(applied) is newer than this build (\(Self.schema.count))")
        }
        for (index, sql) in Self.schema.enumerated().dropFirst(applied) {
            try database.transaction(.immediate) { () throws(StoreError) in
                try database.execute(sql)
                try database.execute("PRAGMA user_version = \(index + 1)")
            }
        }
        self.path = path
        self.writer = ExclusiveAccess(database)
        self.readers = try ReaderPool(path: path, count: readers, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
    }

    // MARK: - Writing

    /// Stores `content`, `thumbnail` and `text` as one new blob row, the files copied `chunkSize`
    /// bytes at a time. Returns its id and the content's size. One write transaction.
    func insert(content: URL, thumbnail: [UInt8]?, text: URL?, chunkSize: Int) throws(StoreError)
        -> (id: Int64, bytes: Int64) {
        let contentFile = try LocalFileReader(content)
        let textFile = try text.map { (url) throws(StoreError) in try LocalFileReader(url) }
        for size in [contentFile.size, textFile?.size ?? 0] where size > Int64(Int32.max) {
            throw StoreError.sqlite(code: SQLITE_TOOBIG, message: "a file of \(size) bytes is too big to store")
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(chunkSize, 1), alignment: 1)
        defer { buffer.deallocate() }
        return try writer.withLock { (database) throws(StoreError) in
            try database.transaction(.immediate) { () throws(StoreError) in
                guard let id = try database.queryFirst(
                    """
                    INSERT INTO blobs (content, thumbnail, text)
                    VALUES (zeroblob(?1), CASE WHEN ?2 >= 0 THEN zeroblob(?2) END, CASE WHEN ?3 >= 0 THEN zeroblob(?3) END)
                    RETURNING id
                    """,
                    [.integer(contentFile.size), .integer(Int64(thumbnail?.count ?? -1)), .integer(textFile?.size ?? -1)],
                    { row in row.int64(0) })
                else { throw StoreError.corrupt("INSERT returned no blob") }
                try contentFile.copy(
                    into: IncrementalBlob(database, table: "blobs", column: "content", row: id, writable: true),
                    using: buffer)
                if let thumbnail {
                    let blob = try IncrementalBlob(database, table: "blobs", column: "thumbnail", row: id, writable: true)
                    try blob.write(thumbnail, at: 0)
                }
                if let textFile {
                    try textFile.copy(
                        into: IncrementalBlob(database, table: "blobs", column: "text", row: id, writable: true),
                        using: buffer)
                }
                return (id, contentFile.size)
            }
        }
    }

    /// Removes the blobs with these ids (absent ones are skipped). One write transaction.
    func delete(_ ids: [Int64]) throws(StoreError) {
        guard !ids.isEmpty else { return }
        try writer.withLock { (database) throws(StoreError) in
            try database.transaction(.immediate) { () throws(StoreError) in
                for id in ids {
                    try database.run("DELETE FROM blobs WHERE id = ?", [.integer(id)])
                }
            }
        }
    }

    // MARK: - Reading

    /// Up to `count` content bytes at `offset` (fewer at the end). Throws `notFound(missing)` when
    /// the blob is gone. One read transaction.
    func readContent(id: Int64, offset: Int64, count: Int, missing: MissingRecord) throws(StoreError) -> [UInt8] {
        try readers.read { (database) throws(StoreError) in
            guard try exists(id, database) else { throw StoreError.notFound(missing) }
            let blob = try IncrementalBlob(database, table: "blobs", column: "content", row: id, writable: false)
            guard offset < Int64(blob.count) else { return [] }
            return try blob.read(count: count, at: Int(offset))
        }
    }

    /// The whole `column` ("thumbnail" or "text"), nil when it is NULL or the blob is gone. Only for
    /// small values and a document's text (which a provider request needs whole anyway).
    func readWhole(id: Int64, column: BlobColumn) throws(StoreError) -> [UInt8]? {
        try readers.read { (database) throws(StoreError) in
            // length() of a BLOB reads its header, not its pages.
            let size = try database.queryFirst(
                "SELECT length(\(column.rawValue)) FROM blobs WHERE id = ?", [.integer(id)]) { row in row.optionalInt64(0) }
            guard let size = size ?? nil else { return nil }
            let blob = try IncrementalBlob(database, table: "blobs", column: column.rawValue, row: id, writable: false)
            return try blob.read(count: Int(size), at: 0)
        }
    }

    /// Every blob id, ascending (for collecting the ones no file refers to). One read transaction.
    func ids() throws(StoreError) -> [Int64] {
        try readers.read { (database) throws(StoreError) in
            try database.query("SELECT id FROM blobs ORDER BY id") { row in row.int64(0) }
        }
    }

    /// The writer's answer to `PRAGMA name` (`journal_mode` and `synchronous` are the connection's own).
    func writerPragma(_ name: String) throws(StoreError) -> String? {
        try writer.withLock { (database) throws(StoreError) in
            try database.queryFirst("PRAGMA \(name)") { row in row.text(0) }
        }
    }

    private func exists(_ id: Int64, _ database: SQLiteDatabase) throws(StoreError) -> Bool {
        try database.queryFirst("SELECT 1 FROM blobs WHERE id = ?", [.integer(id)]) { _ in true } ?? false
    }
}
