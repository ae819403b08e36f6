import Foundation
import ParleyStore
import Synchronization
import XCTest

/// `StoreBackup`: a consistent copy taken with SQLite's online backup API while a writer writes.
final class BackupTests: StoreTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try requireSQLite("SQLite's own files: PostgreSQL is backed up with pg_dump")
    }

    var copyPath: String { directory.appendingPathComponent("copy.sqlite").path }

    /// Rows committed only to the WAL (no checkpoint yet) are in the copy, every row committed before
    /// the backup started is there, and the copy holds whole turns only, a prefix of the original.
    func testCopyTakenWhileAWriterWritesHoldsEveryCommittedRowIncludingTheWAL() throws {
        let store = try makeStore()
        let conversation = try store.createConversation()
        for index in 0..<100 {
            _ = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "q\(index)", model: nil)
        }
        let walBytes = try FileManager.default.attributesOfItem(atPath: databasePath + "-wal")[.size] as? Int ?? 0
        XCTAssertGreaterThan(walBytes, 0, "the turns are still in the WAL, not checkpointed")

        let committed = Atomic<Int>(100)
        let stop = Atomic<Bool>(false)
        let failure = Mutex<String?>(nil)
        let writer = Thread {
            var index = 100
            while !stop.load(ordering: .acquiring) {
                do {
                    _ = try store.appendTurn(conversationID: conversation.id, parentID: nil,
                                             userContent: "q\(index)", model: nil)
                    index += 1
                    committed.store(index, ordering: .releasing)
                } catch {
                    failure.withLock { $0 = "\(error)" }
                    return
                }
            }
        }
        writer.start()
        defer { stop.store(true, ordering: .releasing) }
        /// Waits (bounded) until the writer has committed `count` turns.
        func waitForTurns(_ count: Int) {
            let deadline = Date().addingTimeInterval(20)
            while committed.load(ordering: .acquiring) < count {
                if let failure = failure.withLock({ $0 }) { return XCTFail("writer: \(failure)") }
                guard Date() < deadline else { return XCTFail("the writer made no progress in 20 s") }
                usleep(1_000)
            }
        }
        waitForTurns(120)  // the writer is writing

        let before = committed.load(ordering: .acquiring)
        let summary = try StoreBackup.copy(from: databasePath, to: copyPath)
        let after = committed.load(ordering: .acquiring)
        waitForTurns(after + 10)  // and still writes: the backup ran inside its run of writes
        stop.store(true, ordering: .releasing)
        let deadline = Date().addingTimeInterval(20)
        while !writer.isFinished, Date() < deadline { usleep(1_000) }
        XCTAssertTrue(writer.isFinished)
        XCTAssertNil(failure.withLock { $0 })
        XCTAssertGreaterThan(summary.pages, 0)

        XCTAssertFalse(FileManager.default.fileExists(atPath: copyPath + "-wal"), "the copy is one file")
        let copy = try Store(path: copyPath)
        let copied = try copy.currentBranch(conversationID: conversation.id).map(\.message)
        let original = try store.currentBranch(conversationID: conversation.id).map(\.message)
        XCTAssertGreaterThanOrEqual(copied.count, 2 * before, "every turn committed before the backup")
        XCTAssertEqual(copied.count % 2, 0, "whole turns only")
        XCTAssertEqual(copied.map(\.content), Array(original.prefix(copied.count)).map(\.content))
        XCTAssertEqual(copied.map(\.id), Array(original.prefix(copied.count)).map(\.id))
    }

    func testAnExistingFileIsReplacedOnlyWhenAsked() throws {
        let store = try makeStore()
        let conversation = try store.createConversation(title: "kept")
        try Data("not a backup".utf8).write(to: URL(fileURLWithPath: copyPath))
        XCTAssertThrowsError(try StoreBackup.copy(from: databasePath, to: copyPath)) { error in
            XCTAssertEqual(error as? StoreError, .fileExists(copyPath))
        }
        XCTAssertEqual(try String(contentsOfFile: copyPath, encoding: .utf8), "not a backup", "left untouched")

        try StoreBackup.copy(from: databasePath, to: copyPath, replacing: true)
        XCTAssertEqual(try Store(path: copyPath).conversation(id: conversation.id)?.title, "kept")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains("partial") }
        XCTAssertEqual(leftovers, [])
    }

    func testAMissingSourceIsNotCreatedAndTheErrorNamesIt() throws {
        let missing = directory.appendingPathComponent("missing.sqlite").path
        XCTAssertThrowsError(try StoreBackup.copy(from: missing, to: copyPath)) { error in
            XCTAssertTrue("\(error)".contains(missing), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing))
        XCTAssertFalse(FileManager.default.fileExists(atPath: copyPath))
    }

    func testAnUnopenableDatabaseNamesItsPath() {
        let path = directory.appendingPathComponent("missing/dir/db.sqlite").path
        XCTAssertThrowsError(try Store(path: path)) { error in
            XCTAssertTrue("\(error)".contains(path), "\(error)")
            XCTAssertTrue((error as? StoreError)?.isFileAccess ?? false, "\(error)")
        }
    }
}
