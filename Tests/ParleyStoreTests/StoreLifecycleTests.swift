import Foundation
@testable import ParleyStore
import XCTest

final class StoreLifecycleTests: StoreTestCase {
    func testReopeningAppliesMigrationsOnlyOnce() throws {
        _ = try makeStore()
        // A second run of the v1 migration would fail on CREATE TABLE of an existing table.
        _ = try makeStore()
        let store = try makeStore()
        XCTAssertEqual(try store.listConversations().items, [])
    }

    func testAFileOfTheFirstSchemaIsMigratedKeepingItsData() throws {
        try requireSQLite("an old or unopenable SQLite file")
        // Build a version-1 file by hand, as the first release wrote it.
        do {
            let database = try SQLiteDatabase(path: databasePath, readOnly: false, busyTimeoutMilliseconds: 1000)
            try database.execute(Migration.all[0].sql)
            try database.execute("PRAGMA user_version = 1")
            try database.execute("""
                INSERT INTO conversations VALUES ('c1', 'Old', NULL, NULL, 'm2', 1, 1);
                INSERT INTO messages (id, conversation_id, parent_id, role, content, status, created_at, updated_at)
                VALUES ('m1', 'c1', NULL, 'user', 'question', 'complete', 1, 1),
                       ('m2', 'c1', 'm1', 'assistant', 'answer', 'complete', 2, 2);
                """)
        }
        let store = try makeStore()
        let answer = try XCTUnwrap(store.message(id: "m2"))
        XCTAssertEqual(answer.content, "answer")
        XCTAssertEqual(answer.reasoning, "", "the new column has its default")
        XCTAssertEqual(try store.conversation(id: "c1")?.title, "Old")
        let version = try SQLiteDatabase(path: databasePath, readOnly: false, busyTimeoutMilliseconds: 1000)
            .queryFirst("PRAGMA user_version") { row in Int(row.int64(0)) }
        XCTAssertEqual(version, Migration.all.count)
    }

    func testDataSurvivesReopen() throws {
        var store: Store? = try makeStore()
        let conversation = try XCTUnwrap(store).createConversation(title: "Kept", model: "demo", systemPrompt: "Be brief")
        let turn = try XCTUnwrap(store).appendTurn(
            conversationID: conversation.id, parentID: nil, userContent: "Hello", model: nil)
        _ = try XCTUnwrap(store).finishMessage(id: turn.assistant.id, content: "Hi!", status: .complete)
        let before = try XCTUnwrap(store).currentBranch(conversationID: conversation.id)
        store = nil

        let reopened = try makeStore()
        XCTAssertEqual(try reopened.conversation(id: conversation.id)?.title, "Kept")
        XCTAssertEqual(try reopened.currentBranch(conversationID: conversation.id), before)
        XCTAssertEqual(before.map(\.message.content), ["Hello", "Hi!"])
    }

    func testCommittedProgressIsOnDiskWhileTheStoreIsStillOpen() throws {
        try requireSQLite("copies the SQLite files as a kill -9 leaves them")
        // What a kill -9 leaves behind is what is in the files at that moment: copy them while
        // the store is open (never closed, nothing checkpointed) and open the copy.
        let store = try makeStore()
        let conversation = try store.createConversation()
        let turn = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "Q", model: nil)
        try store.saveProgress([MessageProgress(id: turn.assistant.id, content: "partial answer")])

        let crashDirectory = directory.appendingPathComponent("crash", isDirectory: true)
        try FileManager.default.createDirectory(at: crashDirectory, withIntermediateDirectories: true)
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(
                atPath: databasePath + suffix,
                toPath: crashDirectory.appendingPathComponent("parley.sqlite" + suffix).path)
        }
        let recovered = try Store(path: crashDirectory.appendingPathComponent("parley.sqlite").path)
        XCTAssertEqual(try recovered.message(id: turn.assistant.id)?.content, "partial answer")
        XCTAssertEqual(try recovered.message(id: turn.assistant.id)?.status, .streaming)
        withExtendedLifetime(store) {}
    }

    func testMarkInterruptedAtStartupFinishesOnlyStreamingMessagesAndKeepsContent() throws {
        var store: Store? = try makeStore()
        let conversation = try XCTUnwrap(store).createConversation()
        let first = try XCTUnwrap(store).appendTurn(conversationID: conversation.id, parentID: nil, userContent: "1", model: nil)
        _ = try XCTUnwrap(store).finishMessage(id: first.assistant.id, content: "done", status: .complete)
        let second = try XCTUnwrap(store).appendTurn(conversationID: conversation.id, parentID: nil, userContent: "2", model: nil)
        try XCTUnwrap(store).saveProgress([MessageProgress(id: second.assistant.id, content: "half")])
        store = nil  // the "crash"

        let restarted = try makeStore()
        XCTAssertEqual(try restarted.markInterruptedAtStartup(), 1)
        let interrupted = try XCTUnwrap(restarted.message(id: second.assistant.id))
        XCTAssertEqual(interrupted.status, .interrupted)
        XCTAssertEqual(interrupted.content, "half")
        XCTAssertEqual(try restarted.message(id: first.assistant.id)?.status, .complete)
        XCTAssertEqual(try restarted.markInterruptedAtStartup(), 0)
    }

    func testConfigurationOutOfRangeIsRejected() throws {
        XCTAssertThrowsError(try makeStore(configuration: StoreConfiguration(readers: 0))) { error in
            guard case StoreError.invalidConfiguration = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try makeStore(configuration: StoreConfiguration(busyTimeout: .milliseconds(-1)))) { error in
            guard case StoreError.invalidConfiguration = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try makeStore(configuration: StoreConfiguration(maxPageSize: 0))) { error in
            guard case StoreError.invalidConfiguration = error else { return XCTFail("\(error)") }
        }
    }

    func testASingleReaderConnectionServesConsecutiveReads() throws {
        let store = try makeStore(configuration: StoreConfiguration(readers: 1))
        let conversation = try store.createConversation()
        for _ in 0..<3 {
            XCTAssertEqual(try store.conversation(id: conversation.id), conversation)
        }
    }

    func testUnopenablePathThrowsSQLiteError() throws {
        try requireSQLite("an old or unopenable SQLite file")
        XCTAssertThrowsError(try Store(path: directory.appendingPathComponent("missing/dir/db.sqlite").path)) { error in
            guard case StoreError.sqlite = error else { return XCTFail("\(error)") }
        }
    }
}
