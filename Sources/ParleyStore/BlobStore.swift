import Foundation

/// Where uploaded files' bytes live, apart from the rows that name them: a SQLite file of its own beside
/// the main one (`FileBlobs`), or a table of chunks in PostgreSQL (`PostgresBlobs`).
///
/// The main database's rows are the truth: a blob is written (and durable) before the row that names
/// it and removed after that row is gone, so a crash leaves at worst an unreferenced blob, which the
/// server's start collects (`Store.collectOrphanFiles`). Thread-safe.
protocol BlobStore: Sendable {
    /// Stores `content`, `thumbnail` and `text` as one new blob, the files copied `chunkSize` bytes at a
    /// time. Returns its id and the content's size. Durable when it returns.
    func insert(content: URL, thumbnail: [UInt8]?, text: URL?, chunkSize: Int) throws(StoreError)
        -> (id: Int64, bytes: Int64)

    /// Removes the blobs with these ids (absent ones are skipped).
    func delete(_ ids: [Int64]) throws(StoreError)

    /// Up to `count` content bytes at `offset` (fewer at the end). Throws `notFound(missing)` when the
    /// blob is gone.
    func readContent(id: Int64, offset: Int64, count: Int, missing: MissingRecord) throws(StoreError) -> [UInt8]

    /// The whole `column`, nil when it is NULL or the blob is gone.
    func readWhole(id: Int64, column: BlobColumn) throws(StoreError) -> [UInt8]?

    /// Every blob id, ascending (for collecting the ones no file refers to).
    func ids() throws(StoreError) -> [Int64]
}

/// The optional parts of a blob that `BlobStore.readWhole` reads.
enum BlobColumn: String, Sendable {
    case thumbnail
    case text
}
