extension StoreMigration {
    /// Copies every blob of the files database with its id: into `blob_files` and `blob_chunks` of
    /// `FileContentReader.defaultChunkSize` (`PostgresBlobs`), or whole into `file_blobs`. The content is
    /// read a chunk at a time (`IncrementalBlob`), so a 20 MB file is never one allocation on the chunked
    /// layout. Returns the rows and bytes on both sides.
    func copyBlobs(_ layout: BlobLayout) throws(StoreError) -> (tables: [MigratedTable], bytes: Int64) {
        guard let files else { return (try emptyBlobCounts(layout), 0) }
        let blobs = try files.query("SELECT id FROM blobs ORDER BY id") { row in row.int64(0) }
        let chunkSize = FileContentReader.defaultChunkSize
        var chunks: Int64 = 0
        var bytes: Int64 = 0
        for id in blobs {
            let extras = try files.queryFirst("SELECT thumbnail, text FROM blobs WHERE id = ?", [.integer(id)]) { row in
                (thumbnail: row.optionalBytes(0).map(SQLValue.blob) ?? .null, text: row.optionalBytes(1).map(SQLValue.blob) ?? .null)
            }
            guard let extras else { throw StoreError.corrupt("blob \(id) vanished while it was copied") }
            let content = try IncrementalBlob(files, table: "blobs", column: "content", row: id, writable: false)
            switch layout {
            case .chunks:
                try target.run(
                    "INSERT INTO blob_files (id, size, chunk_size, thumbnail, text) VALUES (?, ?, ?, ?, ?)",
                    [.integer(id), .integer(Int64(content.count)), .integer(Int64(chunkSize)), extras.thumbnail, extras.text])
                var offset = 0
                var sequence: Int64 = 0
                while offset < content.count {
                    let chunk = try content.read(count: chunkSize, at: offset)
                    try target.run("INSERT INTO blob_chunks (blob_id, seq, bytes) VALUES (?, ?, ?)",
                                   [.integer(id), .integer(sequence), .blob(chunk)])
                    offset += chunk.count
                    sequence += 1
                }
                chunks += sequence
            case .whole:
                try target.run("INSERT INTO file_blobs (id, content, thumbnail, text) VALUES (?, ?, ?, ?)",
                               [.integer(id), .blob(try content.read(count: content.count, at: 0)), extras.thumbnail,
                                extras.text])
            }
            bytes += Int64(content.count)
        }
        let table = layout == .chunks ? "blob_files" : "file_blobs"
        var tables = [MigratedTable(name: table, sourceRows: Int64(blobs.count), targetRows: try targetCount(table),
                                    transfer: .files)]
        if layout == .chunks {
            tables.append(MigratedTable(name: "blob_chunks", sourceRows: chunks, targetRows: try targetCount("blob_chunks"),
                                        transfer: .files))
        }
        let stored = layout == .chunks
            ? "SELECT coalesce(sum(octet_length(bytes)), 0) FROM blob_chunks"
            : "SELECT coalesce(sum(octet_length(content)), 0) FROM file_blobs"
        tables.append(MigratedTable(name: "file bytes", sourceRows: bytes,
                                    targetRows: try target.queryFirst(stored) { row in row.int64(0) } ?? 0, transfer: .files))
        return (tables, bytes)
    }

    /// Whether `name` is the target's table of blobs (the one whose ids `files.blob_id` names).
    func blobTable(named name: String) -> Bool {
        ["blob_files", "file_blobs"].contains(name)
    }

    /// Moves the blob id sequences past SQLite's `AUTOINCREMENT` high mark too: a blob removed before the
    /// copy left its id used, and ids are never reused (a late removal of a released id must never hit
    /// a newer blob).
    func keepBlobIDsUnused(_ sequences: [(table: String, sequence: String)]) throws(StoreError) {
        guard let files, !sequences.isEmpty,
              let highest = try files.queryFirst("SELECT seq FROM sqlite_sequence WHERE name = 'blobs'", { row in row.int64(0) }),
              highest > 0
        else { return }
        for entry in sequences {
            _ = try target.query(
                "SELECT setval(?::regclass, GREATEST(?, (SELECT coalesce(max(id), 0) FROM \(Self.quoted(entry.table)))))",
                [.text(entry.sequence), .integer(highest)]) { row in row.int64(0) }
        }
    }

    private func emptyBlobCounts(_ layout: BlobLayout) throws(StoreError) -> [MigratedTable] {
        let names = layout == .chunks ? ["blob_files", "blob_chunks"] : ["file_blobs"]
        var tables: [MigratedTable] = []
        for name in names {
            tables.append(MigratedTable(name: name, sourceRows: 0, targetRows: try targetCount(name), transfer: .files))
        }
        return tables
    }

    private func targetCount(_ table: String) throws(StoreError) -> Int64 {
        try target.queryFirst("SELECT count(*) FROM \(Self.quoted(table))") { row in row.int64(0) } ?? 0
    }
}
