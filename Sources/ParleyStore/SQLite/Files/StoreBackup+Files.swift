import CSQLite
import Foundation

/// The files database's part of a backup.
///
/// The two files cannot be copied in one snapshot, so the order makes the pair sound: the main database
/// first, then the files database. A file row in the main copy had its blob written before it (blob
/// first, then row), so the later files copy holds that blob, unless the file was deleted between the
/// two snapshots (row first, then blob). Those rows are dropped from the main copy: their owner was
/// deleting them. Blobs newer than the main copy have no row there; the restored store collects them
/// at start like any orphan.
extension StoreBackup {
    /// Where the files database of a backup comes from and goes.
    struct FilesCopy {
        let source: String
        let destination: String
        let partial: String
        /// Whether the source has a files database (one written before files existed has none).
        let exists: Bool

        init(source databasePath: String, destination databaseCopy: String) {
            source = FileBlobs.path(forDatabaseAt: databasePath)
            destination = FileBlobs.path(forDatabaseAt: databaseCopy)
            partial = "\(destination).partial-\(getpid())"
            exists = FileManager.default.fileExists(atPath: source)
        }
    }

    /// Copies the files database to its partial file and drops from the main copy (`mainPartial`) the
    /// files whose blob is not in it. Returns `summary` completed with what was copied and dropped.
    static func copyFiles(
        _ files: FilesCopy, besideCopy mainPartial: String, summary: Summary, busyTimeoutMilliseconds: Int32
    ) throws(StoreError) -> Summary {
        let copied = try copyPages(from: files.source, to: files.partial, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        let dropped = try dropFilesWithoutBlobs(
            in: mainPartial, blobs: files.partial, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        return Summary(pages: summary.pages, bytes: summary.bytes, filesPath: files.destination,
                       filePages: copied.pages, fileBytes: copied.bytes, droppedFiles: dropped)
    }

    /// Deletes from the main copy the file rows whose blob the files copy lacks (their message links go
    /// by cascade). Returns how many went; checks the copy again when any did.
    private static func dropFilesWithoutBlobs(
        in mainPartial: String, blobs filesPartial: String, busyTimeoutMilliseconds: Int32
    ) throws(StoreError) -> Int {
        let connection = try open(mainPartial, flags: SQLITE_OPEN_READWRITE, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        defer { sqlite3_close_v2(connection) }
        // A source from before migration v13 has no files table: nothing can refer to a blob.
        guard try single(connection, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'files'") == "1"
        else { return 0 }
        try execute(connection, "PRAGMA foreign_keys = ON")
        let dropped: Int
        do {
            let attach = try Statement(connection: connection, sql: "ATTACH DATABASE ? AS copied_blobs")
            try attach.bind([.text(filesPartial)])
            _ = try attach.step()
            let delete = try Statement(
                connection: connection, sql: "DELETE FROM files WHERE blob_id NOT IN (SELECT id FROM copied_blobs.blobs)")
            _ = try delete.step()
            dropped = Int(sqlite3_changes64(connection))
        }
        if dropped > 0 { try check(connection, path: mainPartial) }
        return dropped
    }

    private static func execute(_ connection: OpaquePointer, _ sql: String) throws(StoreError) {
        let rc = sqlite3_exec(connection, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw StoreError.from(connection: connection, code: rc) }
    }
}
