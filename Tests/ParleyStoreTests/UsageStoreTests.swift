import Foundation
@testable import ParleyStore
import XCTest

/// Token usage kept by the store (migration `…_generation_settings_and_usage`): an estimate where the
/// provider gave none, totals per conversation and per user, day and model, and the backfill of
/// replies finished before the migration.
final class UsageStoreTests: StoreTestCase {
    private let clock = ManualClock(Date(timeIntervalSince1970: 20_000 * 86_400 + 3_600))  // 01:00 UTC
    private var today: Int64 { 20_000 }

    /// A message's stored usage, typed.
    private struct StoredUsage: Decodable, Equatable {
        var inputTokens: Int?
        var outputTokens: Int?
        var estimated: Bool?

        enum CodingKeys: String, CodingKey {
            case estimated
            case inputTokens = "input_tokens"
            case outputTokens = "output_tokens"
        }
    }

    private func usage(_ store: Store, _ id: String) throws -> StoredUsage {
        let text = try XCTUnwrap(try store.message(id: id)?.usage).json
        return try JSONDecoder().decode(StoredUsage.self, from: Data(text.utf8))
    }

    func testReportedUsageIsKeptAndMissingUsageIsEstimatedAndMarked() throws {
        let store = try makeStore(now: clock.now)
        let conversation = try store.createConversation(systemPrompt: "12345678", ownedBy: "bob")
        let first = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "question", model: "m")
        _ = try store.finishMessage(id: first.assistant.id, content: "answer!!", status: .complete,
                                    usage: ReplyTokens(inputTokens: 30, outputTokens: 2))
        XCTAssertEqual(try usage(store, first.assistant.id), StoredUsage(inputTokens: 30, outputTokens: 2))

        // No usage: input = (system 8 + "question" 8 + "answer!!" 8 + "why then" 8) / 4, output = 12 / 4.
        let second = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "why then", model: "m")
        _ = try store.finishMessage(id: second.assistant.id, content: "because 1234", status: .stopped)
        XCTAssertEqual(try usage(store, second.assistant.id), StoredUsage(inputTokens: 8, outputTokens: 3, estimated: true))

        // Half a usage (a stopped Anthropic stream reports input only): the rest is estimated, and the
        // message finish returns is the one stored.
        let third = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "more", model: "m")
        let finished = try store.finishMessage(id: third.assistant.id, content: "12345678", status: .stopped,
                                               usage: ReplyTokens(inputTokens: 50, outputTokens: nil))
        XCTAssertEqual(try usage(store, third.assistant.id), StoredUsage(inputTokens: 50, outputTokens: 2, estimated: true))
        XCTAssertEqual(finished, try store.message(id: third.assistant.id))

        // A usage without counts is estimated whole.
        let fourth = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "x", model: "m")
        _ = try store.finishMessage(id: fourth.assistant.id, content: "abcd", status: .complete,
                                    usage: ReplyTokens(inputTokens: nil, outputTokens: nil))
        XCTAssertEqual(try usage(store, fourth.assistant.id).estimated, true)

        let totals = try XCTUnwrap(try store.usage(conversationIDs: [conversation.id])[conversation.id])
        XCTAssertEqual(totals.replies, 4)
        XCTAssertEqual(totals.estimatedReplies, 3)
        XCTAssertEqual(totals.outputTokens, 2 + 3 + 2 + 1)
    }

    func testRunsAddUpPerDayAndModelAndOutliveTheirConversation() throws {
        let store = try makeStore(now: clock.now)
        let conversation = try store.createConversation(ownedBy: "bob")
        for model in ["b-model", "a-model", "a-model"] {
            let turn = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "q", model: model)
            _ = try store.finishMessage(id: turn.assistant.id, content: "x", status: .complete,
                                        usage: ReplyTokens(inputTokens: 10, outputTokens: 5))
        }
        // A continue is a run of its own.
        let turn = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "q", model: "a-model")
        _ = try store.finishMessage(id: turn.assistant.id, content: "x", status: .stopped,
                                    usage: ReplyTokens(inputTokens: 1, outputTokens: 1))
        clock.advance(milliseconds: 86_400_000)
        _ = try store.resumeStreaming(id: turn.assistant.id)
        _ = try store.finishMessage(id: turn.assistant.id, content: "x more", status: .complete,
                                    usage: ReplyTokens(inputTokens: 2, outputTokens: 2))
        // A streaming reply is not counted yet.
        _ = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "q", model: "a-model")

        let days = try store.usage(userID: "bob", days: today...(today + 1))
        XCTAssertEqual(days.map(\.day), [today, today, today + 1])
        XCTAssertEqual(days.map(\.model), ["a-model", "b-model", "a-model"])
        XCTAssertEqual(days[0].usage, TokenUsage(inputTokens: 21, outputTokens: 11, replies: 3, estimatedReplies: 0))
        XCTAssertEqual(days[2].usage, TokenUsage(inputTokens: 2, outputTokens: 2, replies: 1, estimatedReplies: 0))
        XCTAssertEqual(try store.usage(userID: "bob", days: (today + 1)...(today + 1)).count, 1, "the range is kept")
        XCTAssertEqual(try store.usage(userID: "carol", days: today...today), [], "per user")
        XCTAssertEqual(try store.usage(conversationIDs: [conversation.id])[conversation.id]?.replies, 5)

        try store.deleteConversation(id: conversation.id, ownedBy: "bob")
        XCTAssertEqual(try store.usage(conversationIDs: [conversation.id]), [:], "the conversation's totals go with it")
        XCTAssertEqual(try store.tokenTotals(userID: "bob"),
                       TokenUsage(inputTokens: 33, outputTokens: 18, replies: 5, estimatedReplies: 0),
                       "the user's usage stays")
    }

    func testTotalsSaturateInsteadOfOverflowing() {
        XCTAssertEqual(TokenUsage.saturatingSum(.max - 1, 1), .max)
        XCTAssertEqual(TokenUsage.saturatingSum(.max, .max), .max)
        XCTAssertEqual(TokenUsage.saturatingSum(.min, -1), .min)
        XCTAssertEqual(TokenUsage.saturatingSum(40, 2), 42)
        let top = TokenUsage(inputTokens: .max, outputTokens: .max - 5, replies: 1, estimatedReplies: 0)
        XCTAssertEqual(top + TokenUsage(inputTokens: 1, outputTokens: ReplyTokens.maximum, replies: 1, estimatedReplies: 1),
                       TokenUsage(inputTokens: .max, outputTokens: .max, replies: 2, estimatedReplies: 1))
    }

    func testAReplysCountsAreClampedIntoTheRange() {
        let clamped = ReplyTokens(inputTokens: -5, outputTokens: 1_000_000_000_000)
        XCTAssertEqual(clamped, ReplyTokens(inputTokens: 0, outputTokens: ReplyTokens.maximum))
        XCTAssertEqual(clamped.json, #"{"input_tokens":0,"output_tokens":1000000000}"#)
        XCTAssertEqual(ReplyTokens(stored: #"{"input_tokens":9223372036854775807,"output_tokens":"x","estimated":true}"#),
                       ReplyTokens(inputTokens: ReplyTokens.maximum, outputTokens: nil, estimated: true))
        XCTAssertNil(ReplyTokens(stored: "not json"))
        XCTAssertNil(ReplyTokens(stored: "[1]"))
    }

    /// Rows stored before the bound (here by hand) are read clamped, and the triggers keep totals at
    /// Int64.max as integers when another reply is added.
    func testLegacyTotalsAreReadWithoutOverflowAndStayIntegers() throws {
        let store = try makeStore(now: clock.now)
        let conversation = try store.createConversation(ownedBy: "bob")
        let turn = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "q", model: "m")
        do {
            let database = try rawConnection()
            try database.execute("""
                INSERT INTO usage_daily (user_id, day, model, input_tokens, output_tokens, replies, estimated_replies)
                VALUES ('bob', \(today), 'm', 9223372036854775807, -7, 1, 0),
                       ('bob', 1, 'm', 9223372036854775807, 9223372036854775807, 1, 0);
                INSERT INTO daily_output (user_id, day, output_tokens) VALUES ('bob', \(today), 9223372036854775807);
                """)
        }
        XCTAssertEqual(try store.tokenTotals(userID: "bob"),
                       TokenUsage(inputTokens: .max, outputTokens: .max, replies: 2, estimatedReplies: 0))
        XCTAssertEqual(try store.usage(userID: "bob", days: today...today).first?.usage.outputTokens, 0, "below 0 reads 0")
        _ = try store.finishMessage(id: turn.assistant.id, content: "x", status: .complete,
                                    usage: ReplyTokens(inputTokens: 5, outputTokens: 5))
        XCTAssertEqual(try store.outputTokens(userID: "bob", on: clock.now()), .max)
        let database = try rawConnection()
        if Self.onPostgres {
            // BIGINT columns: no typeof to ask, an overflow would have thrown.
            let row = try database.queryFirst(
                "SELECT u.input_tokens, u.output_tokens FROM usage_daily u WHERE u.day = \(today)", []
            ) { row in [row.int64(0), row.int64(1)] }
            XCTAssertEqual(row, [.max, 5], "a negative total starts again from 0")
            return
        }
        let row = try database.queryFirst(
            """
            SELECT typeof(u.input_tokens), u.input_tokens, u.output_tokens, typeof(d.output_tokens)
            FROM usage_daily u, daily_output d WHERE u.day = \(today) AND d.day = \(today)
            """) { row in [row.text(0), "\(row.int64(1))", "\(row.int64(2))", row.text(3)] }
        XCTAssertEqual(row, ["integer", "9223372036854775807", "5", "integer"], "a negative total starts again from 0")
    }

    func testTheMigrationCountsRepliesFinishedBeforeIt() throws {
        try requireSQLite("migrates an old SQLite file")
        let own = try XCTUnwrap(Migration.all.firstIndex { $0.name.hasSuffix("_generation_settings_and_usage") })
        do {
            let database = try SQLiteDatabase(path: databasePath, readOnly: false, busyTimeoutMilliseconds: 1000)
            for migration in Migration.all.prefix(own) { try database.execute(migration.sql) }
            try database.execute("PRAGMA user_version = \(own)")
            try database.execute("""
                INSERT INTO conversations (id, title, current_leaf_id, created_at, updated_at, owner_id)
                VALUES ('c1', 'Old', 'm4', 1, 1, 'bob');
                INSERT INTO messages (id, conversation_id, parent_id, role, content, status, model, usage, created_at, updated_at)
                VALUES ('m1', 'c1', NULL, 'user', 'question', 'complete', NULL, NULL, 1, 1),
                       ('m2', 'c1', 'm1', 'assistant', 'answer', 'complete', 'demo',
                        '{"input_tokens":7,"output_tokens":3}', 2, 2),
                       ('m3', 'c1', 'm2', 'user', 'again', 'complete', NULL, NULL, 3, 3),
                       ('m4', 'c1', 'm3', 'assistant', '0123456789ab', 'stopped', 'demo', NULL, 4, 4);
                """)
        }
        let store = try makeStore(now: clock.now)
        XCTAssertEqual(try store.usage(conversationIDs: ["c1"])["c1"],
                       TokenUsage(inputTokens: 7, outputTokens: 6, replies: 2, estimatedReplies: 1))
        XCTAssertEqual(try store.usage(userID: "bob", days: 0...0),
                       [DailyUsage(day: 0, model: "demo",
                                   usage: TokenUsage(inputTokens: 7, outputTokens: 6, replies: 2, estimatedReplies: 1))])
        XCTAssertEqual(try store.conversation(id: "c1")?.settings, GenerationSettings(), "no settings until set")
    }

    func testSettingsAreStoredChangedAndCleared() throws {
        let store = try makeStore(now: clock.now)
        let created = try store.createConversation(ownedBy: "bob",
                                                   settings: GenerationSettings(temperature: 0.7, topP: 0.9, maxTokens: 256))
        XCTAssertEqual(try store.conversation(id: created.id)?.settings,
                       GenerationSettings(temperature: 0.7, topP: 0.9, maxTokens: 256))
        let changed = try store.updateGenerationSettings(id: created.id, ownedBy: "bob",
                                                         GenerationSettingsChange(temperature: .some(0), topP: .some(nil)))
        XCTAssertEqual(changed?.settings, GenerationSettings(temperature: 0, topP: nil, maxTokens: 256))
        XCTAssertNil(try store.updateGenerationSettings(id: created.id, ownedBy: "carol", GenerationSettingsChange(maxTokens: 5)),
                     "another owner's conversation is not found")
        XCTAssertEqual(try store.conversation(id: created.id)?.settings.maxTokens, 256)
    }

    func testATranscriptIsStoredAsAlternatingFinishedTurns() throws {
        let store = try makeStore(now: clock.now)
        let conversation = try store.createConversation(ownedBy: "bob")
        try store.appendTranscript(conversationID: conversation.id, turns: [
            TranscriptTurn(role: .user, content: "q", html: "<p>q</p>"),
            TranscriptTurn(role: .assistant, content: "a", html: "<p>a</p>"),
        ])
        let branch = try store.currentBranch(conversationID: conversation.id).map(\.message)
        XCTAssertEqual(branch.map(\.content), ["q", "a"])
        XCTAssertEqual(branch.map(\.status), [.complete, .complete])
        XCTAssertNil(branch[1].usage, "not generated here: no usage")
        XCTAssertEqual(branch.map(\.html), [nil, "<p>a</p>"], "a user turn is kept as typed, without HTML")
        XCTAssertThrowsError(try store.appendTranscript(conversationID: conversation.id, turns: [
            TranscriptTurn(role: .assistant, content: "two assistant turns in a row", html: nil),
        ]))
        XCTAssertEqual(try store.currentBranch(conversationID: conversation.id).count, 2, "nothing written")
    }
}
