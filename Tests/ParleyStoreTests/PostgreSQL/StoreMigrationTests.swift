import Foundation
@testable import ParleyStore
import ParleyPrimitives
import XCTest

/// `StoreMigration` (`parley migrate`): a SQLite store filled through the Store API, copied into a
/// fresh PostgreSQL database, then read back through `Store(postgres:)`, which must answer alike.
///
/// Needs a real server: `PARLEY_TEST_POSTGRES_URL` (scripts/postgres-test-server.sh; the role has
/// CREATEDB). Each test makes a database of its own and drops it. Without the URL the tests skip,
/// unless `PARLEY_REQUIRE_POSTGRES=1` says the run must cover PostgreSQL: then they fail. The store
/// suite's second pass on PostgreSQL (`PARLEY_TEST_STORE_ENGINE=postgres`) skips them: they ran in the
/// first, and their source is SQLite whatever the engine.
final class StoreMigrationTests: XCTestCase {
    private var directory: URL!
    private var serverURL = ""
    private var databaseName: String?
    private var target: PostgresLocation!
    private let clock = ManualClock(Date(timeIntervalSince1970: 20_000 * 86_400 + 3_600))

    private var sourcePath: String { directory.appendingPathComponent("parley.sqlite").path }

    private struct MissingServer: Error, CustomStringConvertible {
        let description = "PARLEY_REQUIRE_POSTGRES=1 but PARLEY_TEST_POSTGRES_URL is not set"
    }

    override func setUpWithError() throws {
        let environment = ProcessInfo.processInfo.environment
        if environment["PARLEY_TEST_STORE_ENGINE"] == "postgres" {
            throw XCTSkip("ran in the first pass (the copy's source is SQLite whatever the engine)")
        }
        guard let url = environment["PARLEY_TEST_POSTGRES_URL"], !url.isEmpty else {
            if environment["PARLEY_REQUIRE_POSTGRES"] == "1" { throw MissingServer() }
            throw XCTSkip("PARLEY_TEST_POSTGRES_URL is not set")
        }
        serverURL = url
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("parley-migrate-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let name = "parley_migrate_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        try PostgresDatabase(url: url, applicationName: "parley-tests").execute("CREATE DATABASE \(name)")
        databaseName = name
        var components = try XCTUnwrap(URLComponents(string: url))
        components.path = "/" + name
        target = try XCTUnwrap(PostgresLocation(url: try XCTUnwrap(components.string)))
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        if let databaseName {
            try PostgresDatabase(url: serverURL, applicationName: "parley-tests")
                .execute("DROP DATABASE IF EXISTS \(databaseName) WITH (FORCE)")
        }
    }

    // MARK: - Filling a SQLite store through its API

    private struct Filled {
        let alice: User
        let conversations: [Conversation]
        let image: StoredFile
        let document: StoredFile
        let imageBytes: [UInt8]
    }

    private func pattern(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31) ^ ($0 >> 8) ^ ($0 >> 16)) &+ seed }
    }

    private func localFile(_ bytes: [UInt8]) throws -> URL {
        let url = directory.appendingPathComponent(UUID().uuidString)
        try Data(bytes).write(to: url)
        return url
    }

    private func metadata(_ owner: String, upload: String, kind: StoredFile.Kind) -> FileMetadata {
        FileMetadata(
            ownerID: owner, filename: kind == .image ? "photo.png" : "notes.txt",
            mediaType: kind == .image ? "image/png" : "text/plain", kind: kind, sha256: "stored-\(upload)",
            uploadSHA256: upload, width: kind == .image ? 640 : nil, height: kind == .image ? 480 : nil,
            textCharacters: kind == .document ? 11 : nil, thumbnailMediaType: kind == .image ? "image/webp" : nil)
    }

    /// Users, sessions, tokens, preferences, tool policies; conversations with branches, a finished
    /// reply with usage, an estimated one, a reply paused on tool calls; files with a thumbnail and a
    /// text, attached and deleted.
    private func fill(_ store: Store) throws -> Filled {
        let alice = try store.createUser(username: "Alice", displayName: "Alice A.", role: .admin, passwordHash: "h1")
        let bob = try store.createUser(username: "bob", displayName: "Bob", role: .member, passwordHash: nil)
        _ = try store.createSession(userID: alice.id, digest: "session-digest", userAgent: "test agent")
        _ = try store.createToken(userID: bob.id, name: "ci", digest: "token-digest")
        _ = try store.updatePreferences(of: alice.id, UserPreferences.Change(defaultModel: .some("m2"),
                                                                              defaultSystemPrompt: .some("Be brief.")))
        try store.rememberTool("docs/search", for: alice.id)

        let first = try store.createConversation(title: "Zebra migration notes", model: "m", systemPrompt: "You help.",
                                                 ownedBy: alice.id, settings: GenerationSettings(temperature: 0.25))
        let turn = try store.appendTurn(conversationID: first.id, parentID: nil, userContent: "Tell me about zebras", model: "m")
        _ = try store.finishMessage(id: turn.assistant.id, content: "Zebras are striped.", status: .complete,
                                    finishReason: .stop, usage: ReplyTokens(inputTokens: 40, outputTokens: 7),
                                    html: "<p>Zebras are striped.</p>\n")
        // A second reply to the same question (a branch), without usage: estimated.
        let sibling = try store.createSibling(ofAssistant: turn.assistant.id, model: "m")
        _ = try store.finishMessage(id: sibling.id, content: "Zebras live in Africa, 日本語 too.", status: .stopped)
        // An edited question: a second root with its own reply, paused on tool calls.
        let edit = try store.appendTurn(conversationID: first.id, parentID: nil, userContent: "Zebra herds?", model: "m")
        let call = ToolCallPart(id: "a", providerID: "call_a", tool: "docs/search", name: "docs__search",
                                argumentsText: #"{"q":"é"}"#, arguments: .object(["q": .string("é")]),
                                status: .awaitingApproval)
        _ = try store.finishMessage(id: edit.assistant.id, content: "Let me look.", status: .awaitingApproval,
                                    finishReason: .toolCalls,
                                    parts: [.text("Let me look.", html: "<p>Let me look.</p>\n"), .toolCall(call)])
        clock.advance(milliseconds: 86_400_000)
        let second = try store.createConversation(title: "Bob's", ownedBy: bob.id)
        let bobTurn = try store.appendTurn(conversationID: second.id, parentID: nil, userContent: "zebra?", model: "n")
        _ = try store.finishMessage(id: bobTurn.assistant.id, content: "A horse.", status: .complete,
                                    usage: ReplyTokens(inputTokens: 3, outputTokens: 2))
        _ = try store.updateConversation(id: second.id, ownedBy: bob.id, pinned: true)

        // 600 KB: three chunks of 256 KiB, the last one partial.
        let imageBytes = pattern(600_000, seed: 7)
        let image = try store.saveFile(metadata(alice.id, upload: "u1", kind: .image), content: localFile(imageBytes),
                                       thumbnail: [1, 2, 3, 250], text: nil)
        let document = try store.saveFile(metadata(alice.id, upload: "u2", kind: .document),
                                          content: localFile(Array("zebra notes".utf8)), thumbnail: nil,
                                          text: localFile(Array("zebra notes".utf8)))
        try store.attachFiles([image.id, document.id], toMessage: turn.user.id, ownedBy: alice.id, includingDeleted: false)
        // A file gone before the copy: its blob id stays used (AUTOINCREMENT) and must never come back.
        let gone = try store.saveFile(metadata(bob.id, upload: "u3", kind: .image), content: localFile(pattern(10, seed: 1)),
                                      thumbnail: nil, text: nil)
        _ = try store.deleteFile(id: gone.id, ownedBy: bob.id)
        _ = try store.collectOrphanFiles()
        return Filled(alice: alice, conversations: [first, second], image: image, document: document,
                      imageBytes: imageBytes)
    }

    /// What the store answers about everything `fill` wrote, to compare across engines.
    private func answers(_ store: Store, _ filled: Filled) throws -> [String] {
        var lines: [String] = []
        for user in try store.users() {
            lines.append("user \(user)")
            lines.append("sessions \(try store.sessions(userID: user.id))")
            lines.append("tokens \(try store.tokens(userID: user.id))")
            lines.append("preferences \(try store.preferences(of: user.id))")
            lines.append("policies \(try store.toolPolicies(for: user.id))")
            lines.append("usage \(try store.usage(userID: user.id))")
            lines.append("totals \(try store.tokenTotals(userID: user.id))")
            lines.append("daily \(try store.usage(userID: user.id, days: 19_990...20_010))")
            lines.append("output \(try store.outputTokens(userID: user.id, on: clock.now()))")
            lines.append("list \(try store.listConversations(ownedBy: user.id))")
            lines.append("files \(try store.listFiles(ownedBy: user.id, limit: 10, cursor: nil))")
        }
        for conversation in filled.conversations {
            lines.append("conversation \(String(describing: try store.conversation(id: conversation.id)))")
            lines.append("messages \(try store.messages(conversationID: conversation.id))")
            lines.append("branch \(try store.currentBranch(conversationID: conversation.id))")
            lines.append("conversation usage \(try store.usage(conversationIDs: [conversation.id]))")
            let ids = try store.messages(conversationID: conversation.id).map(\.id)
            lines.append("message files \(try store.messageFiles(messageIDs: ids))")
        }
        return lines
    }

    private func migrated() throws -> (sqlite: Store, postgres: Store, filled: Filled, report: StoreMigrationReport) {
        let sqlite = try Store(path: sourcePath, configuration: StoreConfiguration(), now: clock.now)
        let filled = try fill(sqlite)
        let report = try StoreMigration.run(from: sourcePath, to: target)
        let postgres = try Store(postgres: target, configuration: StoreConfiguration(), now: clock.now)
        return (sqlite, postgres, filled, report)
    }

    // MARK: - Tests

    func testEveryTableIsCopiedAndCountedAndTheStoreAnswersAlike() throws {
        let (sqlite, postgres, filled, report) = try migrated()
        let names = report.tables.map(\.name)
        for table in ["users", "sessions", "api_tokens", "conversations", "messages", "usage_daily",
                      "conversation_usage", "daily_output", "search_documents", "search_index", "files",
                      "message_files", "user_preferences", "tool_policies", "file bytes"] {
            XCTAssertTrue(names.contains(table), "\(table) in \(names)")
        }
        XCTAssertTrue(report.tables.allSatisfy(\.matches), "\(report.tables)")
        XCTAssertEqual(report.tables.first { $0.name == "messages" }?.targetRows, 7)
        XCTAssertLessThan(names.firstIndex(of: "conversations") ?? .max, names.firstIndex(of: "messages") ?? -1,
                          "a referenced table is copied first")
        XCTAssertEqual(report.fileBytes, 600_000 + 11)

        let expected = try answers(sqlite, filled)
        let actual = try answers(postgres, filled)
        XCTAssertEqual(expected.count, actual.count)
        for (want, got) in zip(expected, actual) {
            XCTAssertEqual(got, want)
        }
    }

    func testEveryCopiedRowAndTheSearchIndexAreEqualOnBothSides() throws {
        let (_, _, _, report) = try migrated()
        let sqlite = try SQLiteDatabase(path: sourcePath, readOnly: true, busyTimeoutMilliseconds: 1000)
        let postgres = try PostgresDatabase(url: target.url, applicationName: "parley-tests")
        for table in report.tables where table.transfer == .copied {
            let columns = try sqlite.query("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(table.name)]) {
                $0.text(0)
            }
            let select = "SELECT " + columns.map { "CAST(\($0) AS TEXT)" }.joined(separator: ", ") + " FROM \(table.name)"
            let read = { (row: Row) in (0..<columns.count).map { row.optionalText(Int32($0)) ?? "NULL" }.joined(separator: "|") }
            let want = try sqlite.query(select, read).sorted()
            XCTAssertEqual(try postgres.query(select, read).sorted(), want, table.name)
            XCTAssertEqual(want.count, Int(table.sourceRows))
        }
        // The index: the same documents with the same text (SQLite's copy carries the owner in front).
        let indexed = try sqlite.query(
            "SELECT rowid, substr(body, instr(body, char(31)) + 1) FROM search_index ORDER BY rowid") { "\($0.int64(0)) \($0.text(1))" }
        XCTAssertEqual(try postgres.query("SELECT doc_id, body FROM search_index ORDER BY doc_id") { "\($0.int64(0)) \($0.text(1))" },
                       indexed)
        XCTAssertTrue(indexed.contains { $0.hasSuffix(" Zebras live in Africa, 日本語 too.") }, "\(indexed)")
        XCTAssertEqual(try postgres.queryFirst("""
            SELECT count(*) FROM search_index i JOIN search_documents d USING (doc_id)
            WHERE i.trigrams @> parley_search_trigrams(d.owner_id, i.body) AND i.trigrams <@ parley_search_trigrams(d.owner_id, i.body)
              AND cardinality(i.trigrams) = cardinality(parley_search_trigrams(d.owner_id, i.body)) AND cardinality(i.trigrams) > 0
            """) { $0.int64(0) }, Int64(indexed.count), "every document's owned trigrams (plpgsql's set)")
        XCTAssertEqual(try postgres.queryFirst("SELECT count(*) FROM search_pending") { $0.int64(0) }, 0, "nothing left queued")
    }

    func testSearchAnswersAlike() throws {
        let (sqlite, postgres, filled, _) = try migrated()
        for query in ["zebra", "日本", "Africa", "notes"] {
            for owner in try sqlite.users().map(\.id) {
                let want = try sqlite.search(query, ownedBy: owner)
                let got = try postgres.search(query, ownedBy: owner)
                // (not `steps`: SQLite's count of its own work)
                XCTAssertEqual(got.hits, want.hits, "\(query) for \(owner)")
                XCTAssertEqual(got.order, want.order, "\(query) for \(owner)")
            }
        }
        XCTAssertFalse(try sqlite.search("zebra", ownedBy: filled.alice.id).hits.isEmpty)
    }

    func testFileBytesRangesThumbnailsAndTextsReadBackFromPostgreSQL() throws {
        let (_, postgres, filled, _) = try migrated()
        let owner = filled.alice.id
        var whole: [UInt8] = []
        var reader = try postgres.fileContent(id: filled.image.id, ownedBy: owner, range: nil)
        while let chunk = try reader.next() { whole += chunk }
        XCTAssertEqual(whole, filled.imageBytes)
        var ranged: [UInt8] = []
        reader = try postgres.fileContent(id: filled.image.id, ownedBy: owner, range: 262_000..<263_000)
        while let chunk = try reader.next() { ranged += chunk }
        XCTAssertEqual(ranged, Array(filled.imageBytes[262_000..<263_000]), "a range across a chunk boundary")
        XCTAssertEqual(try postgres.fileThumbnail(id: filled.image.id, ownedBy: owner)?.bytes, [1, 2, 3, 250])
        XCTAssertEqual(try postgres.fileText(id: filled.document.id, ownedBy: owner), "zebra notes")
    }

    func testUsageTotalsAreCopiedNotCountedAgainAndNewRowsGetFreshIDs() throws {
        let (sqlite, postgres, filled, _) = try migrated()
        let before = try sqlite.tokenTotals(userID: filled.alice.id)
        XCTAssertEqual(try postgres.tokenTotals(userID: filled.alice.id), before)
        XCTAssertEqual(before.replies, 3, "Alice's three runs: complete, stopped, paused on tool calls")

        // The triggers are back on: a new run adds to the copied totals once.
        let conversation = filled.conversations[0]
        let turn = try postgres.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "more", model: "m")
        _ = try postgres.finishMessage(id: turn.assistant.id, content: "ok", status: .complete,
                                       usage: ReplyTokens(inputTokens: 1, outputTokens: 1))
        XCTAssertEqual(try postgres.tokenTotals(userID: filled.alice.id).replies, before.replies + 1)
        XCTAssertEqual(try postgres.search("more", ownedBy: filled.alice.id).hits.map(\.messageID), [turn.user.id],
                       "search triggers are back on")
        let raw = try PostgresDatabase(url: target.url, applicationName: "parley-tests")

        // Sequences moved past the copied ids: a new user and a new file get ids of their own.
        _ = try postgres.createUser(username: "carol", displayName: "Carol", role: .member, passwordHash: nil)
        XCTAssertEqual(try postgres.users().map(\.username), ["Alice", "bob", "carol"])
        let blobTable = try StoreMigration.tableNames(raw).contains("blob_files") ? "blob_files" : "file_blobs"
        let highest = try XCTUnwrap(try raw.queryFirst("SELECT max(id) FROM \(blobTable)") { $0.int64(0) })
        XCTAssertEqual(highest, 2, "the deleted third blob is not in the copy")
        let next = try postgres.saveFile(metadata(filled.alice.id, upload: "u4", kind: .image),
                                         content: localFile(pattern(100, seed: 9)), thumbnail: nil, text: nil)
        XCTAssertGreaterThan(try XCTUnwrap(try raw.queryFirst("SELECT blob_id FROM files WHERE id = ?", [.text(next.id)]) {
            $0.int64(0)
        }), 3, "a blob id SQLite used (then released) is never given again")
    }

    /// A bigger store, timed (the figure is printed): 100 conversations of 10 turns (2,000 messages) and
    /// 8 files of 1 MB by default; `PARLEY_MIGRATE_BENCH_CONVERSATIONS` and `…_FILES` scale it.
    func testABiggerStoreIsCopiedWhole() throws {
        let environment = ProcessInfo.processInfo.environment
        let conversations = environment["PARLEY_MIGRATE_BENCH_CONVERSATIONS"].flatMap { Int($0) } ?? 100
        let fileCount = environment["PARLEY_MIGRATE_BENCH_FILES"].flatMap { Int($0) } ?? 8
        let store = try Store(path: sourcePath, configuration: StoreConfiguration(), now: clock.now)
        let text = String(repeating: "A reply about zebras and their stripes, 縞馬. ", count: 20)
        for index in 0..<conversations {
            let conversation = try store.createConversation(title: "Conversation \(index)", ownedBy: "user\(index % 7)")
            var parent: String?
            for turn in 0..<10 {
                let started = try store.appendTurn(conversationID: conversation.id, parentID: parent,
                                                   userContent: "Question \(turn) of \(index)", model: "m")
                parent = try store.finishMessage(id: started.assistant.id, content: text, status: .complete,
                                                 usage: ReplyTokens(inputTokens: 100, outputTokens: 50)).id
            }
        }
        for index in 0..<fileCount {
            _ = try store.saveFile(metadata("user\(index % 7)", upload: "big\(index)", kind: .image),
                                   content: localFile(pattern(1_048_576, seed: UInt8(index))), thumbnail: [UInt8(index)],
                                   text: nil)
        }
        let report = try StoreMigration.run(from: sourcePath, to: target)
        XCTAssertTrue(report.tables.allSatisfy(\.matches), "\(report.tables)")
        let messages = try XCTUnwrap(report.tables.first { $0.name == "messages" })
        XCTAssertEqual(messages.targetRows, Int64(conversations * 20))
        XCTAssertEqual(report.fileBytes, Int64(fileCount * 1_048_576))
        print("parley migrate: \(messages.targetRows) messages and \(fileCount) MB of files in "
              + String(format: "%.2f", report.seconds) + " s")
    }

    func testANonEmptyTargetIsRefusedAndKeptAsItWas() throws {
        _ = try fill(try Store(path: sourcePath, configuration: StoreConfiguration(), now: clock.now))
        let existing = try Store(postgres: target)
        let kept = try existing.createConversation(title: "already here")
        let raw = try PostgresDatabase(url: target.url, applicationName: "parley-tests")
        XCTAssertThrowsError(try StoreMigration.run(from: sourcePath, to: target)) { error in
            guard case .targetNotEmpty(let tables) = error as? StoreMigrationError else {
                return XCTFail("\(error)")
            }
            XCTAssertTrue(tables.contains("conversations"), "\(tables)")
            XCTAssertTrue((error as? StoreMigrationError)?.isBadUse ?? false)
        }
        XCTAssertEqual(try raw.query("SELECT id FROM conversations") { $0.text(0) }, [kept.id])
        XCTAssertEqual(try raw.queryFirst("SELECT count(*) FROM users") { $0.int64(0) }, 0, "nothing was written")
    }

    func testAMissingOrDirectorySourceIsAClearErrorAndWritesNothing() throws {
        for path in [directory.appendingPathComponent("nope.sqlite").path, directory.path] {
            XCTAssertThrowsError(try StoreMigration.run(from: path, to: target)) { error in
                XCTAssertEqual(error as? StoreMigrationError, .sourceMissing(path: path))
                XCTAssertTrue("\(error)".contains(path), "\(error)")
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("nope.sqlite").path),
                       "no empty SQLite file was made")
        let raw = try PostgresDatabase(url: target.url, applicationName: "parley-tests")
        XCTAssertEqual(try StoreMigration.tableNames(raw), [], "the target was not even migrated")
    }

    func testAFailedCopyLeavesTheTargetEmptyAndTheSameCommandRunsAgain() throws {
        let sqlite = try Store(path: sourcePath, configuration: StoreConfiguration(), now: clock.now)
        let filled = try fill(sqlite)
        // A value PostgreSQL's column cannot hold (SQLite keeps text in an INTEGER column), written behind
        // the store's back: the copy fails in the middle of `messages`, after the tables before it.
        let raw = try SQLiteDatabase(path: sourcePath, readOnly: false, busyTimeoutMilliseconds: 1000)
        let id = try XCTUnwrap(try sqlite.messages(conversationID: filled.conversations[1].id).last?.id)
        let stamp = try XCTUnwrap(try raw.queryFirst("SELECT updated_at FROM messages WHERE id = ?", [.text(id)]) {
            $0.int64(0)
        })
        try raw.run("UPDATE messages SET updated_at = 'soon' WHERE id = ?", [.text(id)])
        XCTAssertThrowsError(try StoreMigration.run(from: sourcePath, to: target)) { error in
            guard case .store = error as? StoreMigrationError else { return XCTFail("\(error)") }
        }
        let target = try PostgresDatabase(url: self.target.url, applicationName: "parley-tests")
        for table in ["users", "conversations", "messages", "search_documents"] {
            XCTAssertEqual(try target.queryFirst("SELECT count(*) FROM \(table)") { $0.int64(0) }, 0, table)
        }
        XCTAssertEqual(try target.queryFirst(
            "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal AND tgenabled = 'D'") { $0.int64(0) }, 0,
            "the triggers are on again")

        try raw.run("UPDATE messages SET updated_at = ? WHERE id = ?", [.integer(stamp), .text(id)])
        let report = try StoreMigration.run(from: sourcePath, to: self.target)
        XCTAssertTrue(report.tables.allSatisfy(\.matches))
    }

    func testAnOlderSQLiteSchemaIsRefused() throws {
        _ = try Store(path: sourcePath, configuration: StoreConfiguration())
        let raw = try SQLiteDatabase(path: sourcePath, readOnly: false, busyTimeoutMilliseconds: 1000)
        try raw.execute("PRAGMA user_version = 3")
        XCTAssertThrowsError(try StoreMigration.run(from: sourcePath, to: target)) { error in
            XCTAssertEqual(error as? StoreMigrationError,
                           .sourceSchema(path: sourcePath, version: 3, expected: Migration.all.count))
        }
    }
}
