import Foundation
@testable import ParleyStore
import XCTest

/// `StoreBackup` copies the files database with the main one, as a pair that opens.
final class FileBackupTests: FileTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try requireSQLite("SQLite's own files: PostgreSQL is backed up with pg_dump")
    }

    var copyPath: String { directory.appendingPathComponent("copy.sqlite").path }
    var filesCopyPath: String { directory.appendingPathComponent("copy.files.sqlite").path }

    func testABackupCopiesBothFilesAndTheCopyServesTheBytes() throws {
        let store = try makeStore()
        let bytes = pattern(700_000)
        let file = try store.saveFile(
            metadata(kind: .document, filename: "notes.txt"), content: localFile(bytes), thumbnail: nil,
            text: localFile(Array("notes".utf8)))
        let message = try userMessage(store)
        try store.attachFiles([file.id], toMessage: message.messageID, ownedBy: "alice")

        let summary = try StoreBackup.copy(from: databasePath, to: copyPath)
        XCTAssertEqual(summary.filesPath, filesCopyPath)
        XCTAssertGreaterThan(summary.fileBytes, bytes.count)
        XCTAssertEqual(summary.droppedFiles, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: filesCopyPath + "-wal"), "the copy is one file")

        let copy = try Store(path: copyPath)
        XCTAssertEqual(try copy.file(id: file.id, ownedBy: "alice"), file)
        XCTAssertEqual(try drain(copy.fileContent(id: file.id, ownedBy: "alice")).bytes, bytes)
        XCTAssertEqual(try copy.fileText(id: file.id, ownedBy: "alice"), "notes")
        XCTAssertEqual(try copy.messageFiles(messageID: message.messageID), [file])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains("partial") }
        XCTAssertEqual(leftovers, [])
    }

    func testAnExistingFilesCopyIsReplacedOnlyWhenAsked() throws {
        let store = try makeStore()
        try save(store)
        try Data("not a backup".utf8).write(to: URL(fileURLWithPath: filesCopyPath))
        XCTAssertThrowsError(try StoreBackup.copy(from: databasePath, to: copyPath)) { error in
            XCTAssertEqual(error as? StoreError, .fileExists(filesCopyPath))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: copyPath), "nothing half-done")
        try StoreBackup.copy(from: databasePath, to: copyPath, replacing: true)
        XCTAssertEqual(try Store(path: copyPath).fileBlobs.ids().count, 1)
    }

    /// A file deleted between the two snapshots (its row in the main copy, its blob gone from the
    /// files copy) is left out of the copy, so no row of the copy names a missing blob.
    func testAFileWhoseBlobIsGoneFromTheFilesCopyIsLeftOut() throws {
        let store = try makeStore()
        let gone = try save(store, upload: "gone")
        let kept = try save(store, upload: "kept")
        let message = try userMessage(store)
        try store.attachFiles([gone.id, kept.id], toMessage: message.messageID, ownedBy: "alice")
        let blobs = try store.fileBlobs.ids()
        try store.fileBlobs.delete([try XCTUnwrap(blobs.first)])  // as if removed after the main snapshot

        let summary = try StoreBackup.copy(from: databasePath, to: copyPath)
        XCTAssertEqual(summary.droppedFiles, 1)
        let copy = try Store(path: copyPath)
        assertFileNotFound(gone.id, try copy.file(id: gone.id, ownedBy: "alice"))
        XCTAssertEqual(try copy.messageFiles(messageID: message.messageID), [kept])
    }

    /// A database written before files existed has no files database: the backup copies the one file.
    func testASourceWithoutAFilesDatabaseCopiesTheMainOneAlone() throws {
        let store = try makeStore()
        let conversation = try store.createConversation(title: "old")
        let filesPath = Store.filesDatabasePath(forDatabaseAt: databasePath)
        for suffix in ["", "-wal", "-shm"] { unlink(filesPath + suffix) }
        let summary = try StoreBackup.copy(from: databasePath, to: copyPath)
        XCTAssertNil(summary.filesPath)
        XCTAssertFalse(FileManager.default.fileExists(atPath: filesCopyPath))
        XCTAssertEqual(try Store(path: copyPath).conversation(id: conversation.id)?.title, "old")
    }
}
