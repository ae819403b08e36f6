import Foundation
import ParleyPrimitives
import ParleyStore
import XCTest

/// Issue 20's storage: a reply's parts, the `awaiting_approval` status, decisions recorded once,
/// "always allow" policies, a conversation's tools, and tool calls a crash left open.
final class ToolCallStoreTests: StoreTestCase {
    private var store: Store!
    private var conversation: Conversation!

    override func setUpWithError() throws {
        try super.setUpWithError()
        store = try makeStore()
        conversation = try store.createConversation(tools: ["docs/*"])
    }

    private func call(_ id: String, status: ToolCallStatus) -> ToolCallPart {
        ToolCallPart(id: id, providerID: "call_\(id)", tool: "docs/search", name: "docs__search",
                     argumentsText: #"{"q":"é"}"#, arguments: .object(["q": .string("é")]), status: status)
    }

    /// A reply paused for approval of calls `a` and `b`.
    private func pausedReply() throws -> Message {
        let reply = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "q",
                                         model: "m").assistant
        let parts: [MessagePart] = [.text("Let me look.", html: "<p>Let me look.</p>\n"),
                                    .toolCall(call("a", status: .awaitingApproval)),
                                    .toolCall(call("b", status: .awaitingApproval))]
        return try store.finishMessage(id: reply.id, content: "Let me look.", status: .awaitingApproval,
                                       finishReason: .toolCalls, parts: parts)
    }

    func testPartsAndTheAwaitingStatusAreStoredAndReadBack() throws {
        let paused = try pausedReply()
        let read = try XCTUnwrap(try store.message(id: paused.id))
        XCTAssertEqual(read.status, .awaitingApproval)
        XCTAssertEqual(read.parts, paused.parts)
        XCTAssertEqual(read.toolCalls.map(\.id), ["a", "b"])
        XCTAssertEqual(read.toolCalls.first?.arguments, .object(["q": .string("é")]))
        XCTAssertEqual(try store.conversation(id: conversation.id)?.tools, ["docs/*"])
    }

    func testAMessageStoredWithoutPartsHasItsTextsParts() throws {
        let reply = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "q",
                                         model: "m").assistant
        let finished = try store.finishMessage(id: reply.id, content: "hi", reasoning: "hmm", status: .complete,
                                               html: "<p>hi</p>\n")
        XCTAssertEqual(finished.parts, [.reasoning("hmm"), .text("hi", html: "<p>hi</p>\n")])
    }

    func testEachCallIsDecidedOnceAndTheLastDecisionSaysNoneRemain() throws {
        let paused = try pausedReply()
        let first = try store.decideToolCall(messageID: paused.id, callID: "a", decision: .deny,
                                             ownedBy: conversation.ownerID)
        XCTAssertEqual(first.undecided, 1)
        XCTAssertEqual(first.message.toolCalls[0].status, .denied)
        XCTAssertEqual(first.message.toolCalls[0].result, Store.deniedResult)
        XCTAssertThrowsError(try store.decideToolCall(messageID: paused.id, callID: "a", decision: .approve,
                                                      ownedBy: conversation.ownerID)) { error in
            guard case StoreError.conflict = error else { return XCTFail("\(error)") }
        }
        let last = try store.decideToolCall(messageID: paused.id, callID: "b", decision: .approve,
                                            ownedBy: conversation.ownerID)
        XCTAssertEqual(last.undecided, 0)
        XCTAssertEqual(last.message.toolCalls[1].status, .awaitingApproval)
        XCTAssertEqual(last.message.toolCalls[1].decision, .approve)
        XCTAssertEqual(try store.message(id: paused.id)?.parts, last.message.parts)
    }

    func testAForeignOwnerOrAnUnknownCallIsNotFound() throws {
        let paused = try pausedReply()
        XCTAssertThrowsError(try store.decideToolCall(messageID: paused.id, callID: "a", decision: .approve,
                                                      ownedBy: "someone-else")) { error in
            XCTAssertEqual(error as? StoreError, .notFound(.message(id: paused.id)))
        }
        XCTAssertThrowsError(try store.decideToolCall(messageID: paused.id, callID: "zz", decision: .approve,
                                                      ownedBy: conversation.ownerID)) { error in
            XCTAssertEqual(error as? StoreError, .notFound(.toolCall(id: "zz", messageID: paused.id)))
        }
    }

    func testADecisionOnAReplyThatIsNotWaitingIsAConflict() throws {
        let paused = try pausedReply()
        _ = try store.beginContinue(id: paused.id)
        XCTAssertThrowsError(try store.decideToolCall(messageID: paused.id, callID: "a", decision: .approve,
                                                      ownedBy: conversation.ownerID)) { error in
            guard case StoreError.conflict = error else { return XCTFail("\(error)") }
        }
    }

    func testPoliciesAreRememberedPerUserAndTakenBack() throws {
        try store.rememberTool("docs/search", for: "u1")
        try store.rememberTool("docs/search", for: "u1")
        try store.rememberTool("calc/add", for: "u2")
        XCTAssertEqual(try store.toolPolicies(for: "u1").map(\.tool), ["docs/search"])
        XCTAssertTrue(try store.forgetTool("docs/search", for: "u1"))
        XCTAssertFalse(try store.forgetTool("docs/search", for: "u1"))
        XCTAssertEqual(try store.toolPolicies(for: "u1"), [])
        XCTAssertEqual(try store.toolPolicies(for: "u2").map(\.tool), ["calc/add"])
    }

    func testSetToolsIsScopedToTheOwner() throws {
        XCTAssertNil(try store.setTools(["x/y"], conversationID: conversation.id, ownedBy: "someone-else"))
        XCTAssertEqual(try store.setTools(["calc/add"], conversationID: conversation.id)?.tools, ["calc/add"])
    }

    func testACrashCancelsTheOpenCallsOfAStreamingReplyAndKeepsTheRest() throws {
        let reply = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "q",
                                         model: "m").assistant
        var done = call("a", status: .complete)
        done.result = .text("42", isError: false)
        let parts: [MessagePart] = [.toolCall(done), .toolCall(call("b", status: .running)),
                                    .toolCall(call("c", status: .streaming))]
        try store.saveProgress([MessageProgress(id: reply.id, content: "", parts: parts)])
        XCTAssertEqual(try store.markInterruptedAtStartup(), 1)
        let read = try XCTUnwrap(try store.message(id: reply.id))
        XCTAssertEqual(read.status, .interrupted)
        XCTAssertEqual(read.toolCalls.map(\.status), [.complete, .cancelled, .cancelled])
        XCTAssertEqual(read.toolCalls[0].result, .text("42", isError: false))
    }

    func testTheWidenedStatusCheckHoldsForANewConnection() throws {
        // The table's SQL was edited in sqlite_schema: a connection opened afterwards reads the new CHECK.
        let paused = try pausedReply()
        XCTAssertEqual(paused.status, .awaitingApproval)
        let reopened = try makeStore()
        XCTAssertEqual(try reopened.message(id: paused.id)?.status, .awaitingApproval)
    }
}
