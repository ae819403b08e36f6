import Foundation
@testable import ParleyStore
import Synchronization
import XCTest

/// Files and the messages that hold them: delete, keep, release, and what a crash leaves behind.
final class FileLifecycleTests: FileTestCase {
    func testAnUnheldFileIsRemovedWithItsBytes() throws {
        let store = try makeStore()
        let file = try save(store)
        XCTAssertEqual(try store.deleteFile(id: file.id, ownedBy: "alice"), .removed)
        assertFileNotFound(file.id, try store.file(id: file.id, ownedBy: "alice"))
        assertFileNotFound(file.id, try store.deleteFile(id: file.id, ownedBy: "alice"))
        XCTAssertEqual(try store.fileBlobs.ids(), [], "the blob went right after the row")
    }

    func testAHeldFileIsKeptHiddenAndRefusedUntilItsLastMessageGoes() throws {
        let store = try makeStore()
        let file = try save(store, upload: "held")
        let other = try save(store, upload: "other")
        let first = try userMessage(store)
        let second = try userMessage(store)
        try store.attachFiles([file.id, other.id], toMessage: first.messageID, ownedBy: "alice")
        try store.attachFiles([file.id], toMessage: second.messageID, ownedBy: "alice")
        XCTAssertEqual(try store.messageFiles(messageID: first.messageID).map(\.id), [file.id, other.id])
        let both = try store.messageFiles(messageIDs: [first.messageID, second.messageID, "none"])
        XCTAssertEqual(both.mapValues { $0.map(\.id) }, [first.messageID: [file.id, other.id], second.messageID: [file.id]])

        XCTAssertEqual(try store.deleteFile(id: file.id, ownedBy: "alice"), .kept(messages: 2))
        XCTAssertEqual(try store.deleteFile(id: file.id, ownedBy: "alice"), .kept(messages: 2), "asking again changes nothing")
        XCTAssertEqual(try store.listFiles(ownedBy: "alice", limit: 10, cursor: nil).items.map(\.id), [other.id])
        XCTAssertEqual(try store.file(id: file.id, ownedBy: "alice"), file, "still served for its messages")
        XCTAssertEqual(try drain(store.fileContent(id: file.id, ownedBy: "alice")).bytes, pattern(1000))
        assertFileNotFound(file.id, try store.liveFiles(ids: [other.id, file.id], ownedBy: "alice"))
        XCTAssertEqual(try store.liveFiles(ids: [other.id, other.id], ownedBy: "alice"), [other, other])
        let third = try userMessage(store)
        assertFileNotFound(file.id, try store.attachFiles([other.id, file.id], toMessage: third.messageID, ownedBy: "alice"))
        XCTAssertEqual(try store.messageFiles(messageID: third.messageID), [], "all or nothing")
        // A branch keeps its parent's files, deleted ones included.
        try store.attachFiles([file.id], toMessage: third.messageID, ownedBy: "alice", includingDeleted: true)

        try store.deleteConversation(id: first.conversationID, ownedBy: "alice")
        try store.deleteConversation(id: second.conversationID, ownedBy: "alice")
        XCTAssertEqual(try store.file(id: file.id, ownedBy: "alice"), file, "the third message holds it")
        try store.deleteConversation(id: third.conversationID, ownedBy: "alice")
        assertFileNotFound(file.id, try store.file(id: file.id, ownedBy: "alice"))
        XCTAssertEqual(try store.file(id: other.id, ownedBy: "alice"), other, "a live file stays when its messages go")
        XCTAssertEqual(try store.fileBlobs.ids().count, 1, "the kept file's blob went with its row")
    }

    func testUploadingADeletedButKeptFileAgainBringsItBack() throws {
        let store = try makeStore()
        let file = try save(store, upload: "again")
        let message = try userMessage(store)
        try store.attachFiles([file.id], toMessage: message.messageID, ownedBy: "alice")
        XCTAssertEqual(try store.deleteFile(id: file.id, ownedBy: "alice"), .kept(messages: 1))
        XCTAssertEqual(try store.fileForUpload(ownedBy: "alice", uploadSHA256: "again"), file)
        XCTAssertEqual(try store.listFiles(ownedBy: "alice", limit: 10, cursor: nil).items, [file])

        XCTAssertEqual(try store.deleteFile(id: file.id, ownedBy: "alice"), .kept(messages: 1))
        XCTAssertEqual(try save(store, upload: "again", seed: 3), file, "a save of the same upload also brings it back")
        try store.deleteConversation(id: message.conversationID, ownedBy: "alice")
        XCTAssertEqual(try store.file(id: file.id, ownedBy: "alice"), file, "live again, so its message's delete keeps it")
        XCTAssertEqual(try store.fileBlobs.ids().count, 1)
    }

    func testWhatACrashLeavesBehindIsCollectedAtStart() throws {
        var store: Store? = try makeStore()
        let kept = try save(try XCTUnwrap(store), upload: "kept")
        // A crash between the blob and its row: a blob no row names.
        let orphan = try XCTUnwrap(store).fileBlobs.insert(
            content: localFile(pattern(5000)), thumbnail: [1, 2, 3], text: nil, chunkSize: 1024)
        XCTAssertEqual(try XCTUnwrap(store).fileBlobs.ids().count, 2)
        store = nil

        let reopened = try makeStore()
        XCTAssertEqual(try reopened.fileBlobs.ids().count, 2, "opening a store alone collects nothing")
        XCTAssertEqual(try reopened.collectOrphanFiles(), 1)
        let ids = try reopened.fileBlobs.ids()
        XCTAssertEqual(ids.count, 1, "only the blob of the file that has a row")
        XCTAssertFalse(ids.contains(orphan.id))
        XCTAssertEqual(try drain(reopened.fileContent(id: kept.id, ownedBy: "alice")).bytes, pattern(1000))
        XCTAssertEqual(try reopened.collectOrphanFiles(), 0, "nothing left to collect")
    }

    /// In one process a collection may run beside saves: it never takes a blob whose row is coming.
    func testACollectionBesideSavesNeverTakesABlobWhoseRowIsComing() throws {
        let store = try makeStore()
        let contents = try (0..<4).map { try localFile(pattern(300_000, seed: UInt8($0))) }
        let uploads = (0..<24).map { metadata(upload: "u\($0)") }
        let errors = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 24) { index in
            do {
                if index % 3 == 0 {
                    try store.collectOrphanFiles()
                } else {
                    _ = try store.saveFile(uploads[index], content: contents[index % 4], thumbnail: nil, text: nil)
                }
            } catch {
                errors.withLock { $0.append("\(error)") }
            }
        }
        XCTAssertEqual(errors.withLock { $0 }, [])
        let files = try store.listFiles(ownedBy: "alice", limit: 100, cursor: nil).items
        XCTAssertEqual(files.count, 16)
        for file in files {
            let index = try XCTUnwrap(Int(file.uploadSHA256.dropFirst()))
            XCTAssertEqual(try drain(store.fileContent(id: file.id, ownedBy: "alice")).bytes,
                           pattern(300_000, seed: UInt8(index % 4)))
        }
        XCTAssertEqual(try store.fileBlobs.ids().count, 16)
    }

    func testAReleasedBlobLeftInTheQueueIsRemovedAtStart() throws {
        var store: Store? = try makeStore()
        let file = try save(try XCTUnwrap(store))
        // The row's delete committed (and queued its blob); the process died before removing the blob.
        _ = try XCTUnwrap(store).write { (writer, _) throws(StoreError) in
            try writer.database.run("DELETE FROM files WHERE id = ?", [.text(file.id)])
        }
        XCTAssertEqual(try XCTUnwrap(store).fileBlobs.ids().count, 1)
        store = nil
        let reopened = try makeStore()
        XCTAssertEqual(try reopened.collectOrphanFiles(), 1)
        XCTAssertEqual(try reopened.fileBlobs.ids(), [])
        let queued = try reopened.read { (database) throws(StoreError) in
            try database.queryFirst("SELECT count(*) FROM released_blobs") { $0.int64(0) }
        }
        XCTAssertEqual(queued, 0)
    }

    /// An OS crash can undo a delete in the main database (WAL, `synchronous = NORMAL`) but not the
    /// removal of the blob that followed it (the files database commits to the disk): the row, which
    /// was on its way out, goes at start instead of pointing at nothing.
    func testARowWhoseBlobIsGoneIsRemovedAtStart() throws {
        var store: Store? = try makeStore()
        let kept = try save(try XCTUnwrap(store), upload: "kept", seed: 1)
        let undone = try save(try XCTUnwrap(store), upload: "undone", seed: 2)
        let message = try userMessage(try XCTUnwrap(store))
        try XCTUnwrap(store).attachFiles([undone.id], toMessage: message.messageID, ownedBy: "alice")
        let blobID = try XCTUnwrap(store).read { (database) throws(StoreError) in
            try database.queryFirst("SELECT blob_id FROM files WHERE id = ?", [.text(undone.id)]) { $0.int64(0) }
        }
        try XCTUnwrap(store).fileBlobs.delete([try XCTUnwrap(blobID)])
        store = nil

        let reopened = try makeStore()
        XCTAssertEqual(try reopened.collectOrphanFiles(), 0, "no blob to remove")
        assertFileNotFound(undone.id, try reopened.file(id: undone.id, ownedBy: "alice"))
        XCTAssertEqual(try reopened.messageFiles(messageID: message.messageID), [], "its message no longer shows it")
        XCTAssertEqual(try drain(reopened.fileContent(id: kept.id, ownedBy: "alice")).bytes, pattern(1000, seed: 1))
        let queued = try reopened.read { (database) throws(StoreError) in
            try database.queryFirst("SELECT count(*) FROM released_blobs") { $0.int64(0) }
        }
        XCTAssertEqual(queued, 0)
    }

    /// The files database writes appended pages once (a rollback journal, not WAL) and commits to the
    /// disk (`synchronous = FULL`) before the row that names a blob is written; a new file has 64 KiB
    /// pages (`FileBlobs`).
    func testTheFilesDatabaseUsesARollbackJournalThatSyncsAndLargePages() throws {
        try requireSQLite("the SQLite files database's journal")
        let store = try makeStore()
        _ = try save(store, upload: "one")
        let path = Store.filesDatabasePath(forDatabaseAt: databasePath)
        let files = try SQLiteDatabase(path: path, readOnly: true, busyTimeoutMilliseconds: 1000)
        func single(_ sql: String) throws -> String? { try files.queryFirst(sql) { $0.text(0) } }
        XCTAssertEqual(try single("PRAGMA page_size"), "65536")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))
        XCTAssertEqual(try XCTUnwrap(store.fileBlobs as? FileBlobs).writerPragma("journal_mode"), "truncate")
        XCTAssertEqual(try XCTUnwrap(store.fileBlobs as? FileBlobs).writerPragma("synchronous"), "2", "FULL")
        XCTAssertEqual(try XCTUnwrap(store.fileBlobs as? FileBlobs).writerPragma("cache_size"), "-2000", "2,000 KiB, not 500 pages of 64 KiB")
    }

    func testTheFilesDatabaseSitsBesideTheMainOne() throws {
        try requireSQLite("the SQLite files database's path")
        XCTAssertEqual(Store.filesDatabasePath(forDatabaseAt: "/data/parley.sqlite"), "/data/parley.files.sqlite")
        XCTAssertEqual(Store.filesDatabasePath(forDatabaseAt: "/data/parley"), "/data/parley.files.sqlite")
        _ = try makeStore()
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.appendingPathComponent("parley.files.sqlite").path))
    }
}
