import Foundation
import ParleyStore
import XCTest

/// The per-user, per-UTC-day output counter (migration 5) that PARLEY_USER_DAILY_OUTPUT_TOKENS reads.
final class DailyOutputTests: StoreTestCase {
    private let clock = ManualClock(Date(timeIntervalSince1970: 20_000 * 86_400 + 3_600))  // 01:00 UTC

    func testEachFinishedRunCountsItsReportedOutputTokensOnce() throws {
        let store = try makeStore(now: clock.now)
        let conversation = try store.createConversation(ownedBy: "bob")
        let turn = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "hi", model: "demo")
        try store.saveProgress([MessageProgress(id: turn.assistant.id, content: "partial text")])
        XCTAssertEqual(try store.outputTokens(userID: "bob", on: clock.now()), 0, "a streaming reply is not counted yet")
        _ = try store.finishMessage(id: turn.assistant.id, content: "the answer", status: .complete,
                                    usage: ReplyTokens(inputTokens: 3, outputTokens: 42))
        XCTAssertEqual(try store.outputTokens(userID: "bob", on: clock.now()), 42)
        // A continue is a second run: its own usage is added.
        _ = try store.resumeStreaming(id: turn.assistant.id)
        _ = try store.finishMessage(id: turn.assistant.id, content: "the answer, longer", status: .stopped,
                                    usage: ReplyTokens(inputTokens: nil, outputTokens: 8))
        XCTAssertEqual(try store.outputTokens(userID: "bob", on: clock.now()), 50)
        XCTAssertEqual(try store.outputTokens(userID: "carol", on: clock.now()), 0, "per user")
        // Deleting the conversation keeps what was spent.
        try store.deleteConversation(id: conversation.id, ownedBy: "bob")
        XCTAssertEqual(try store.outputTokens(userID: "bob", on: clock.now()), 50)
    }

    func testWithoutUsageTheRunCountsItsBytesOverFour() throws {
        let store = try makeStore(now: clock.now)
        let conversation = try store.createConversation(ownedBy: "bob")
        let turn = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "hi", model: "demo")
        _ = try store.finishMessage(id: turn.assistant.id, content: "ééééé12", status: .failed, usage: nil,
                                    errorCode: "upstream_unauthorized")  // 12 UTF-8 bytes
        XCTAssertEqual(try store.outputTokens(userID: "bob", on: clock.now()), 3)
        let other = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "x", model: "demo")
        _ = try store.finishMessage(id: other.assistant.id, content: "abcdefgh", status: .complete,
                                    usage: ReplyTokens(inputTokens: nil, outputTokens: nil))
        XCTAssertEqual(try store.outputTokens(userID: "bob", on: clock.now()), 5, "a usage without counts counts bytes too")
    }

    func testTheDayIsTheUTCDayTheRunEnded() throws {
        let store = try makeStore(now: clock.now)
        let conversation = try store.createConversation(ownedBy: "bob")
        let turn = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "hi", model: "demo")
        clock.advance(milliseconds: 23 * 3_600_000)  // 00:00 UTC the next day
        _ = try store.finishMessage(id: turn.assistant.id, content: "x", status: .complete,
                                    usage: ReplyTokens(inputTokens: nil, outputTokens: 7))
        XCTAssertEqual(try store.outputTokens(userID: "bob", on: clock.now().addingTimeInterval(-1)), 0)
        XCTAssertEqual(try store.outputTokens(userID: "bob", on: clock.now()), 7)
    }

    func testARunCutByACrashCountsWhenMarkedInterrupted() throws {
        var store: Store? = try makeStore(now: clock.now)
        let conversation = try store!.createConversation(ownedBy: "bob")
        let turn = try store!.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "hi", model: "demo")
        try store!.saveProgress([MessageProgress(id: turn.assistant.id, content: "0123456789abcdef")])
        store = nil
        let reopened = try makeStore(now: clock.now)
        XCTAssertEqual(try reopened.markInterruptedAtStartup(), 1)
        XCTAssertEqual(try reopened.outputTokens(userID: "bob", on: clock.now()), 4)
    }
}
