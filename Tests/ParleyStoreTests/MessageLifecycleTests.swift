import Foundation
import ParleyStore
import XCTest

final class MessageLifecycleTests: StoreTestCase {
    private var store: Store!
    private var conversation: Conversation!

    override func setUpWithError() throws {
        try super.setUpWithError()
        store = try makeStore()
        conversation = try store.createConversation()
    }

    private func startTurn() throws -> Message {
        try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "q", model: "m").assistant
    }

    func testSaveProgressUpdatesOnlyStreamingMessagesInOneCall() throws {
        let streamingA = try startTurn()
        let finished = try startTurn()
        _ = try store.finishMessage(id: finished.id, content: "final", status: .stopped)
        let streamingB = try store.createSibling(ofAssistant: finished.id, model: nil)

        let changed = try store.saveProgress([
            MessageProgress(id: streamingA.id, content: "a..."),
            MessageProgress(id: finished.id, content: "overwritten?"),
            MessageProgress(id: streamingB.id, content: "b..."),
            MessageProgress(id: "missing", content: "x"),
        ])
        XCTAssertEqual(changed, 2)
        XCTAssertEqual(try store.message(id: streamingA.id)?.content, "a...")
        XCTAssertEqual(try store.message(id: streamingB.id)?.content, "b...")
        XCTAssertEqual(try store.message(id: finished.id)?.content, "final")
        XCTAssertEqual(try store.saveProgress([]), 0)
    }

    func testFinishStoresTheOutcome() throws {
        let assistant = try startTurn()
        let finished = try store.finishMessage(
            id: assistant.id, content: "**hi**", status: .complete, finishReason: "stop",
            usage: ReplyTokens(inputTokens: 3, outputTokens: 1), model: "resolved-model", html: "<p><strong>hi</strong></p>")
        XCTAssertEqual(finished.status, .complete)
        XCTAssertEqual(finished.finishReason, "stop")
        XCTAssertEqual(finished.usage, ReplyTokens(inputTokens: 3, outputTokens: 1), "a whole usage is stored as given")
        XCTAssertEqual(finished.model, "resolved-model")
        XCTAssertEqual(finished.html, "<p><strong>hi</strong></p>")
        XCTAssertEqual(try store.message(id: assistant.id), finished)
    }

    func testFinishWithoutModelKeepsTheStoredOneAndRecordsErrors() throws {
        let assistant = try startTurn()
        let failed = try store.finishMessage(
            id: assistant.id, content: "par", status: .failed, errorCode: "upstream_timeout", errorMessage: "timed out")
        XCTAssertEqual(failed.model, "m")
        XCTAssertEqual(failed.errorCode, "upstream_timeout")
        XCTAssertEqual(failed.errorMessage, "timed out")
        XCTAssertEqual(failed.content, "par")
    }

    func testFinishingTwiceOrAsStreamingIsAConflict() throws {
        let assistant = try startTurn()
        XCTAssertThrowsError(try store.finishMessage(id: assistant.id, content: "", status: .streaming)) { error in
            guard case StoreError.conflict = error else { return XCTFail("\(error)") }
        }
        _ = try store.finishMessage(id: assistant.id, content: "done", status: .complete)
        XCTAssertThrowsError(try store.finishMessage(id: assistant.id, content: "again", status: .stopped)) { error in
            guard case StoreError.conflict = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try store.finishMessage(id: "missing", content: "", status: .complete)) { error in
            guard case StoreError.notFound = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try store.message(id: assistant.id)?.content, "done")
    }

    func testResumeMakesAStoppedMessageStreamingAgainAndCurrent() throws {
        let assistant = try startTurn()
        _ = try store.finishMessage(id: assistant.id, content: "half", status: .stopped, finishReason: "user", html: "<p>half</p>")
        let sibling = try store.createSibling(ofAssistant: assistant.id, model: nil)
        _ = try store.finishMessage(id: sibling.id, content: "other", status: .complete)

        let resumed = try store.resumeStreaming(id: assistant.id)
        XCTAssertEqual(resumed.status, .streaming)
        XCTAssertEqual(resumed.content, "half")
        XCTAssertNil(resumed.finishReason)
        XCTAssertNil(resumed.html)
        XCTAssertEqual(try store.conversation(id: conversation.id)?.currentLeafID, assistant.id)
        XCTAssertEqual(try store.saveProgress([MessageProgress(id: assistant.id, content: "half and more")]), 1)
    }

    func testReasoningIsSavedWithProgressKeptByFinishAndKeptByResume() throws {
        let assistant = try startTurn()
        XCTAssertEqual(assistant.reasoning, "")
        try store.saveProgress([MessageProgress(id: assistant.id, content: "", reasoning: "thinking 日本")])
        XCTAssertEqual(try store.message(id: assistant.id)?.reasoning, "thinking 日本")

        // nil keeps what progress stored; a value replaces it.
        let stopped = try store.finishMessage(id: assistant.id, content: "ans", status: .stopped)
        XCTAssertEqual(stopped.reasoning, "thinking 日本")
        let resumed = try store.resumeStreaming(id: assistant.id)
        XCTAssertEqual(resumed.reasoning, "thinking 日本", "continue keeps the reasoning")
        let finished = try store.finishMessage(id: assistant.id, content: "answer", reasoning: "thinking 日本, more",
                                               status: .complete)
        XCTAssertEqual(finished.reasoning, "thinking 日本, more")
        XCTAssertEqual(try store.message(id: assistant.id), finished)
    }

    func testResumeOfAStreamingMessageIsAConflict() throws {
        let assistant = try startTurn()
        XCTAssertThrowsError(try store.resumeStreaming(id: assistant.id)) { error in
            guard case StoreError.conflict = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try store.resumeStreaming(id: "missing")) { error in
            guard case StoreError.notFound = error else { return XCTFail("\(error)") }
        }
    }

    func testResumeOfAMessageWithRepliesOrOfAUserMessageIsAConflict() throws {
        let turn = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "q", model: nil)
        _ = try store.finishMessage(id: turn.assistant.id, content: "a", status: .complete)
        _ = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "q2", model: nil)
        for id in [turn.assistant.id, turn.user.id] {
            XCTAssertThrowsError(try store.resumeStreaming(id: id)) { error in
                guard case StoreError.conflict = error else { return XCTFail("\(error)") }
            }
        }
    }
}
