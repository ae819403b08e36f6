import Foundation

/// The SQLite store keeps uploaded files: rows in the main database (migration v13), bytes in the
/// files database (`FileBlobs`).
extension Store: FileStore {
    // MARK: - Writing files

    /// Stores the blob first (files database, its own writer), then the row (main writer): a crash
    /// between the two leaves only an unreferenced blob, collected at the next start. When the owner
    /// already has a file from the same upload, the upsert returns that one (brought back if deleted
    /// but kept) and the blob just written is removed. Holds `fileSaves` throughout.
    public func saveFile(
        _ metadata: FileMetadata, content: URL, thumbnail: [UInt8]?, text: URL?
    ) throws(StoreError) -> StoredFile {
        try fileSaves.withLock { (_) throws(StoreError) -> StoredFile in
            let blob = try fileBlobs.insert(
                content: content, thumbnail: thumbnail, text: text, chunkSize: FileContentReader.defaultChunkSize)
            let saved: (file: StoredFile, blobID: Int64)
            do throws(StoreError) {
                saved = try insertFileRow(metadata, blobID: blob.id, bytes: blob.bytes, hasThumbnail: thumbnail != nil)
            } catch {
                try? fileBlobs.delete([blob.id])  // else collected at the next start
                throw error
            }
            if saved.blobID != blob.id {
                try? fileBlobs.delete([blob.id])  // a duplicate upload: the file already has its bytes
            }
            return saved.file
        }
    }

    private func insertFileRow(
        _ metadata: FileMetadata, blobID: Int64, bytes: Int64, hasThumbnail: Bool
    ) throws(StoreError) -> (file: StoredFile, blobID: Int64) {
        try write { (writer, now) throws(StoreError) in
            let row = try writer.database.queryFirst(
                """
                INSERT INTO files (id, owner_id, filename, media_type, kind, bytes, sha256, upload_sha256, width,
                                   height, pages, text_chars, note, thumbnail_media_type, blob_id, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (owner_id, upload_sha256) DO UPDATE SET deleted_at = NULL
                RETURNING \(StoredFile.columns), blob_id
                """,
                [.text(RecordID.make()), .text(metadata.ownerID), .text(metadata.filename), .text(metadata.mediaType),
                 .text(metadata.kind.rawValue), .integer(bytes), .text(metadata.sha256), .text(metadata.uploadSHA256),
                 .optionalInteger(metadata.width), .optionalInteger(metadata.height), .optionalInteger(metadata.pages),
                 .optionalInteger(metadata.textCharacters), .optionalText(metadata.note),
                 hasThumbnail ? .text(metadata.thumbnailMediaType ?? "application/octet-stream") : .null,
                 .integer(blobID), .integer(now)]
            ) { (row) throws(StoreError) in (file: try StoredFile(row: row), blobID: row.int64(15)) }
            guard let row else { throw StoreError.corrupt("INSERT returned no file") }
            return row
        }
    }

    /// A read transaction; a write one only to bring back a deleted file (most uploads are new bytes,
    /// and those should not wait for the writer).
    public func fileForUpload(ownedBy owner: String, uploadSHA256: String) throws(StoreError) -> StoredFile? {
        let live = try read { (database) throws(StoreError) in
            try database.queryFirst(
                "SELECT \(StoredFile.columns), deleted_at IS NULL FROM files WHERE owner_id = ? AND upload_sha256 = ?",
                [.text(owner), .text(uploadSHA256)]
            ) { (row) throws(StoreError) in (file: try StoredFile(row: row), live: row.int64(15) == 1) }
        }
        guard let live else { return nil }
        if live.live { return live.file }
        return try write { (writer, _) throws(StoreError) in
            try writer.database.queryFirst(
                """
                UPDATE files SET deleted_at = NULL WHERE owner_id = ? AND upload_sha256 = ?
                RETURNING \(StoredFile.columns)
                """,
                [.text(owner), .text(uploadSHA256)], StoredFile.init(row:))
        }
    }

    /// Write transaction: the row goes (its blob right after it, `releaseFileBlobs`) when no message
    /// holds the file, else it is marked deleted (the first time's `deleted_at` stays).
    public func deleteFile(id: String, ownedBy owner: String) throws(StoreError) -> FileDeletion {
        let deletion = try write { (writer, now) throws(StoreError) -> FileDeletion in
            let database = writer.database
            guard let holders = try database.queryFirst(
                "SELECT (SELECT count(DISTINCT message_id) FROM message_files WHERE file_id = files.id) FROM files WHERE id = ? AND owner_id = ?",
                [.text(id), .text(owner)], { row in Int(row.int64(0)) })
            else { throw StoreError.notFound(.file(id: id)) }
            guard holders == 0 else {
                try database.run("UPDATE files SET deleted_at = coalesce(deleted_at, ?) WHERE id = ?",
                                 [.integer(now), .text(id)])
                return .kept(messages: holders)
            }
            try database.run("DELETE FROM files WHERE id = ?", [.text(id)])
            return .removed
        }
        if deletion == .removed { releaseFileBlobsAfterCommit() }
        return deletion
    }

    // MARK: - Reading files

    /// Read transaction.
    public func file(id: String, ownedBy owner: String) throws(StoreError) -> StoredFile {
        try read { (database) throws(StoreError) in try Self.file(id: id, ownedBy: owner, database).file }
    }

    /// Read transaction: one primary-key probe per id.
    public func liveFiles(ids: [String], ownedBy owner: String) throws(StoreError) -> [StoredFile] {
        try read { (database) throws(StoreError) in
            try ids.map { (id) throws(StoreError) -> StoredFile in
                guard let file = try database.queryFirst(
                    "SELECT \(StoredFile.columns) FROM files WHERE id = ? AND owner_id = ? AND deleted_at IS NULL",
                    [.text(id), .text(owner)], StoredFile.init(row:))
                else { throw StoreError.notFound(.file(id: id)) }
                return file
            }
        }
    }

    /// Keyset pagination on `(created_at, id)` like `listConversations` (a page costs the same however
    /// deep it is); `limit` is cut to 1...`configuration.maxPageSize`. Read transaction.
    public func listFiles(ownedBy owner: String, limit: Int, cursor: String?) throws(StoreError) -> FilePage {
        let pageSize = min(max(limit, 1), configuration.maxPageSize)
        let after = try cursor.map { (text) throws(StoreError) in try PageCursor(encoded: text) }
        let rows = try read { (database) throws(StoreError) in
            // Two statements, not `?2 IS NULL OR ...`: the row-value bound must reach the index as a range.
            if let after {
                return try database.query(
                    """
                    SELECT \(StoredFile.columns) FROM files \(database.dialect.indexedBy("files_by_owner"))
                    WHERE owner_id = ? AND deleted_at IS NULL AND (created_at, id) < (?, ?)
                    ORDER BY created_at DESC, id DESC LIMIT ?
                    """,
                    [.text(owner), .integer(after.updatedAtMilliseconds), .text(after.id), .integer(Int64(pageSize + 1))],
                    StoredFile.init(row:))
            }
            return try database.query(
                """
                SELECT \(StoredFile.columns) FROM files \(database.dialect.indexedBy("files_by_owner"))
                WHERE owner_id = ? AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT ?
                """,
                [.text(owner), .integer(Int64(pageSize + 1))], StoredFile.init(row:))
        }
        guard rows.count > pageSize else { return FilePage(items: rows, nextCursor: nil) }
        let items = Array(rows.prefix(pageSize))
        let last = items[items.count - 1]
        let next = PageCursor(updatedAtMilliseconds: last.createdAt.millisecondsSince1970, id: last.id)
        return FilePage(items: items, nextCursor: next.encoded)
    }

    /// One read transaction finds the file; each chunk is then its own read of the files database.
    public func fileContent(
        id: String, ownedBy owner: String, range: Range<Int64>?, chunkSize: Int
    ) throws(StoreError) -> FileContentReader {
        let found = try read { (database) throws(StoreError) in try Self.file(id: id, ownedBy: owner, database) }
        let whole = Int64(0)..<found.file.bytes
        let wanted = (range ?? whole).clamped(to: whole)
        let blobs = fileBlobs
        let blobID = found.blobID
        return FileContentReader(range: wanted, chunkSize: chunkSize) { (offset, count) throws(StoreError) in
            try blobs.readContent(id: blobID, offset: offset, count: count, missing: .file(id: id))
        }
    }

    /// Two reads: the row (main), then the bytes (files database).
    public func fileThumbnail(id: String, ownedBy owner: String) throws(StoreError) -> (bytes: [UInt8], mediaType: String)? {
        let found = try read { (database) throws(StoreError) in
            let found = try Self.file(id: id, ownedBy: owner, database)
            let mediaType = try database.queryFirst(
                "SELECT thumbnail_media_type FROM files WHERE id = ?", [.text(id)]) { row in row.optionalText(0) }
            return (blobID: found.blobID, mediaType: mediaType ?? nil)
        }
        guard let mediaType = found.mediaType,
              let bytes = try fileBlobs.readWhole(id: found.blobID, column: .thumbnail) else { return nil }
        return (bytes, mediaType)
    }

    /// Two reads: the row (main), then the text (files database), decoded as UTF-8.
    public func fileText(id: String, ownedBy owner: String) throws(StoreError) -> String? {
        let found = try read { (database) throws(StoreError) in try Self.file(id: id, ownedBy: owner, database) }
        return try fileBlobs.readWhole(id: found.blobID, column: .text).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Read transaction; the owner's part of `files_by_upload` is summed.
    public func fileBytes(ownedBy owner: String) throws(StoreError) -> Int64 {
        try read { (database) throws(StoreError) in
            try database.queryFirst(
                "SELECT coalesce(sum(bytes), 0) FROM files WHERE owner_id = ?", [.text(owner)]) { row in row.int64(0) } ?? 0
        }
    }

    /// The owner's file (live or deleted but kept) and its blob id, or `notFound(.file)` for an
    /// unknown id and another owner's alike.
    static func file(id: String, ownedBy owner: String, _ database: Database) throws(StoreError)
        -> (file: StoredFile, blobID: Int64) {
        guard let found = try database.queryFirst(
            "SELECT \(StoredFile.columns), blob_id FROM files WHERE id = ? AND owner_id = ?", [.text(id), .text(owner)],
            { (row) throws(StoreError) in (file: try StoredFile(row: row), blobID: row.int64(15)) })
        else { throw StoreError.notFound(.file(id: id)) }
        return found
    }
}
