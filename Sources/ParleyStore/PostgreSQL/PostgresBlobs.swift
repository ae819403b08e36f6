import Foundation

/// Uploaded files' bytes in PostgreSQL: one `blob_files` row per blob (its size, thumbnail and text) and
/// its content in `blob_chunks` of a fixed size, so a 20 MB upload is written and read a chunk at a time
/// (a range request reads only the chunks it needs) and no single value nears PostgreSQL's 1 GB limit.
///
/// Chunks in `bytea`, not large objects: a large object outlives its row unless someone unlinks it,
/// and dumps (`pg_dump`) and row-level deletes treat `bytea` like any other column.
///
/// ## Concurrency and durability
/// Thread-safe. Writes run on a connection of their own (so an upload never holds the store's writer),
/// each one transaction; reads on the pool given. A commit is durable when it returns (PostgreSQL's
/// `synchronous_commit`), so the blob is stored before the row that names it, as with `FileBlobs`.
final class PostgresBlobs: BlobStore {
    private let writer: ExclusiveAccess<any Database>
    private let readers: ReaderPool<any Database>

    init(writer: any Database, readers: ReaderPool<any Database>) {
        self.writer = ExclusiveAccess(writer)
        self.readers = readers
    }

    func insert(content: URL, thumbnail: [UInt8]?, text: URL?, chunkSize: Int) throws(StoreError)
        -> (id: Int64, bytes: Int64) {
        let contentFile = try LocalFileReader(content)
        let textBytes = try text.map { (url) throws(StoreError) in try Self.wholeFile(url) }
        let chunk = max(chunkSize, 1)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 1)
        defer { buffer.deallocate() }
        return try writer.withLock { (database) throws(StoreError) in
            try database.transaction(.immediate) { () throws(StoreError) in
                guard let id = try database.queryFirst(
                    "INSERT INTO blob_files (size, chunk_size, thumbnail, text) VALUES (?, ?, ?, ?) RETURNING id",
                    [.integer(contentFile.size), .integer(Int64(chunk)), thumbnail.map(SQLValue.blob) ?? .null,
                     textBytes.map(SQLValue.blob) ?? .null],
                    { row in row.int64(0) })
                else { throw StoreError.corrupt("INSERT returned no blob") }
                var copied: Int64 = 0
                var sequence: Int64 = 0
                while copied < contentFile.size {
                    let wanted = Int(min(Int64(chunk), contentFile.size - copied))
                    let read = try contentFile.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]))
                    guard read == wanted else { throw StoreError.conflict("\(content.path) shrank while it was stored") }
                    try database.run(
                        "INSERT INTO blob_chunks (blob_id, seq, bytes) VALUES (?, ?, ?)",
                        [.integer(id), .integer(sequence), .blob(Array(buffer[0..<wanted]))])
                    copied += Int64(wanted)
                    sequence += 1
                }
                return (id, contentFile.size)
            }
        }
    }

    func delete(_ ids: [Int64]) throws(StoreError) {
        guard !ids.isEmpty else { return }
        // One statement, one round trip; the chunks go with their rows (ON DELETE CASCADE).
        let list = "{" + ids.map(String.init).joined(separator: ",") + "}"
        try writer.withLock { (database) throws(StoreError) in
            _ = try database.run("DELETE FROM blob_files WHERE id = ANY(?::BIGINT[])", [.text(list)])
        }
    }

    func readContent(id: Int64, offset: Int64, count: Int, missing: MissingRecord) throws(StoreError) -> [UInt8] {
        try readers.read { (database) throws(StoreError) in
            guard let found = try database.queryFirst(
                "SELECT size, chunk_size FROM blob_files WHERE id = ?", [.integer(id)],
                { row in (size: row.int64(0), chunk: max(row.int64(1), 1)) })
            else { throw StoreError.notFound(missing) }
            guard offset >= 0, offset < found.size, count > 0 else { return [] }
            let end = min(found.size, offset + Int64(count))
            let first = offset / found.chunk
            let last = (end - 1) / found.chunk
            let chunks = try database.query(
                "SELECT seq, bytes FROM blob_chunks WHERE blob_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
                [.integer(id), .integer(first), .integer(last)],
                { row in (sequence: row.int64(0), bytes: row.optionalBytes(1) ?? []) })
            var result: [UInt8] = []
            result.reserveCapacity(Int(end - offset))
            for chunk in chunks {
                let start = chunk.sequence * found.chunk
                let from = Int(max(offset - start, 0))
                let to = Int(min(end - start, Int64(chunk.bytes.count)))
                if from < to { result.append(contentsOf: chunk.bytes[from..<to]) }
            }
            guard Int64(result.count) == end - offset else {
                throw StoreError.corrupt("blob \(id) is missing chunks between \(first) and \(last)")
            }
            return result
        }
    }

    func readWhole(id: Int64, column: BlobColumn) throws(StoreError) -> [UInt8]? {
        try readers.read { (database) throws(StoreError) in
            let sql = switch column {
            case .thumbnail: "SELECT thumbnail FROM blob_files WHERE id = ?"
            case .text: "SELECT text FROM blob_files WHERE id = ?"
            }
            return try database.queryFirst(sql, [.integer(id)]) { row in row.optionalBytes(0) } ?? nil
        }
    }

    func ids() throws(StoreError) -> [Int64] {
        try readers.read { (database) throws(StoreError) in
            try database.query("SELECT id FROM blob_files ORDER BY id", []) { row in row.int64(0) }
        }
    }

    /// A document's text file, whole (a provider request needs it whole anyway).
    private static func wholeFile(_ url: URL) throws(StoreError) -> [UInt8] {
        let file = try LocalFileReader(url)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(max(file.size, 1)), alignment: 1)
        defer { buffer.deallocate() }
        let read = try file.read(into: buffer)
        return Array(buffer[0..<read])
    }
}
