import Foundation

extension Store {
    // MARK: - Collecting what files leave behind

    /// Call once at start, before serving, like `markInterruptedAtStartup` (`ParleyApp` does). Within
    /// this process it is safe at any time: it holds `fileSaves`, so no blob is between its write and its
    /// row; another process's saves it cannot see, so never call it from a command run beside a server.
    /// Steps: deleted files no message holds
    /// go (the trigger normally does it; this covers rows from before it or a crash); released blobs go;
    /// then every blob whose id no `files` row names; then every row whose blob is gone. The last
    /// happens only after an OS crash or power loss undid a file's delete in the main database
    /// (`synchronous = NORMAL` may lose its last commits) but not the removal of its blob (the files
    /// database commits to the disk): the row was on its way out and has no bytes, so it goes.
    /// Returns how many blobs were removed.
    @discardableResult
    public func collectOrphanFiles() throws(StoreError) -> Int {
        try fileSaves.withLock { (_) throws(StoreError) -> Int in
            _ = try write { (writer, _) throws(StoreError) in
                try writer.database.run(
                    """
                    DELETE FROM files WHERE deleted_at IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM message_files WHERE file_id = files.id)
                    """)
            }
            let released = try releaseFileBlobs()
            let referenced = Set(try read { (database) throws(StoreError) in
                try database.query("SELECT blob_id FROM files") { row in row.int64(0) }
            })
            let present = try fileBlobs.ids()
            let orphans = present.filter { !referenced.contains($0) }
            try fileBlobs.delete(orphans)
            let missing = referenced.subtracting(present).sorted()
            if !missing.isEmpty {
                _ = try write { (writer, _) throws(StoreError) in
                    for id in missing {
                        try writer.database.run("DELETE FROM files WHERE blob_id = ?", [.integer(id)])
                    }
                }
                try releaseFileBlobs()  // the trigger queued the ids; their blobs are already gone
            }
            return released + orphans.count
        }
    }

    /// Removes the blobs of deleted file rows (queued in `released_blobs` by a trigger in the same
    /// transaction as the delete): the blobs first, then the queue, so a crash between leaves ids to
    /// remove again, never a blob nobody will remove. Ids are never reused, so a late removal is safe.
    /// Returns how many ids were released.
    @discardableResult
    func releaseFileBlobs() throws(StoreError) -> Int {
        let ids = try read { (database) throws(StoreError) in
            try database.query("SELECT blob_id FROM released_blobs ORDER BY blob_id") { row in row.int64(0) }
        }
        guard !ids.isEmpty else { return 0 }
        try fileBlobs.delete(ids)
        try write { (writer, _) throws(StoreError) in
            for id in ids {
                try writer.database.run("DELETE FROM released_blobs WHERE blob_id = ?", [.integer(id)])
            }
        }
        return ids.count
    }

    /// `releaseFileBlobs` after a delete has committed. A failure here must not turn that delete into
    /// an error: the ids stay queued and the next release (or start) removes them.
    func releaseFileBlobsAfterCommit() {
        _ = try? releaseFileBlobs()
    }
}
