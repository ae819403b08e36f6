@testable import ParleyGeneration
import ParleyMarkdown
import ParleyPrimitives
import ParleyProviders
import ParleyStore
import XCTest

/// The value types of the tool loop, without a server: the reply's parts and block numbering, the turns a
/// model reads, and the result cap.
final class ToolPartsTests: XCTestCase {
    private let renderer = MarkdownRenderer()

    private func call(_ id: String, _ status: ToolCallStatus, result: ToolCallResult? = nil, round: Int = 0) -> ToolCallPart {
        ToolCallPart(id: id, providerID: "p\(id)", tool: "docs/search", name: "docs__search", argumentsText: "{\"q\":1}",
                     arguments: .object(["q": .integer(1)]), status: status, result: result, round: round)
    }

    func testBlocksCountAcrossTextPartsAndTheSnapshotSaysWhichAreWhose() {
        var parts = ReplyParts(renderer: renderer)
        parts.closeSegment(text: "# A\n\nb", reasoning: "think", blocks: ["<h1>A</h1>\n", "<p>b</p>\n"])
        let started = parts.beginCall(index: 0, providerID: "x", name: "docs__search", tool: "docs/search")
        XCTAssertEqual(started.id, "call_1")
        XCTAssertEqual(parts.appendArguments(index: 0, "{}"), "call_1")
        XCTAssertNil(parts.appendArguments(index: 3, "{}"), "an index that never began is ignored")
        let snapshot = parts.snapshot(text: "after", reasoning: "", liveBlocks: 1)
        XCTAssertEqual(snapshot, [.reasoning("think"), .text("# A\n\nb", firstBlock: 0, blockCount: 2),
                                  .toolCall(parts.roundCalls[0]), .text("after", firstBlock: 2, blockCount: 1)])
        XCTAssertEqual(parts.content(text: "after"), "# A\n\nb\n\nafter")
    }

    func testStoredPartsSplitIntoClosedOnesAndTheTrailingText() {
        let stored: [MessagePart] = [.text("a", html: nil), .toolCall(call("call_1", .complete)), .reasoning("r"),
                                     .text("tail", html: nil)]
        let split = ReplyParts.split(stored)
        XCTAssertEqual(split.closed.count, 2)
        XCTAssertEqual(split.text, "tail")
        XCTAssertEqual(split.reasoning, "r")
        let plain = ReplyParts.split([.reasoning("r"), .text("only", html: "<p>only</p>")])
        XCTAssertEqual(plain.closed, [])
        XCTAssertEqual(plain.text, "only")
    }

    func testAResumedRoundRunsItsApprovedCallsInTheSameRound() {
        let parts = ReplyParts(closed: [.toolCall(call("call_1", .complete, result: .text("1", isError: false))),
                                        .toolCall(call("call_2", .awaitingApproval, round: 1))], renderer: renderer)
        XCTAssertEqual(parts.pendingCalls, [])
        var approved = call("call_3", .awaitingApproval, round: 1)
        approved.decision = .approve
        let resumed = ReplyParts(closed: [.toolCall(approved)], renderer: renderer)
        XCTAssertEqual(resumed.pendingCalls.map(\.id), ["call_3"])
        XCTAssertEqual(resumed.round, 1)
        XCTAssertEqual(parts.round, 2)
    }

    func testTurnsGiveEachRoundItsCallsThenTheirResultsInOrder() {
        let parts: [MessagePart] = [
            .reasoning("never sent"), .text("Looking.", html: nil),
            .toolCall(call("call_1", .complete, result: .text("one", isError: false))),
            .toolCall(call("call_2", .denied, result: Store.deniedResult)),
            .text("Again.", html: nil), .toolCall(call("call_3", .cancelled, round: 1)), .text("Done.", html: nil),
        ]
        let turns = ToolTurns.messages(from: parts, messageID: "m")
        XCTAssertEqual(turns.map(\.role), [.assistant, .tool, .tool, .assistant, .tool, .assistant])
        XCTAssertEqual(turns[0].content, "Looking.")
        XCTAssertEqual(turns[0].toolCalls.map(\.id), ["m_call_1", "m_call_2"])
        XCTAssertEqual(turns[1].toolCallID, "m_call_1")
        XCTAssertEqual(turns[1].content, "one")
        XCTAssertTrue(turns[2].isError)
        XCTAssertEqual(turns[4].content, ToolTurns.cancelledText)
        XCTAssertEqual(turns[5].content, "Done.")
        XCTAssertFalse(turns.contains { $0.content.contains("never sent") })
    }

    func testAResultOverTheCapIsCutOnACharacterWithAMarker() {
        let cap = ToolResultLimit(maxBytes: 10)
        let big = ToolCallResult(content: [.object(["type": .string("text"), "text": .string("ééééééé")]),
                                           .object(["type": .string("image"), "data": .string("AAAA"),
                                                    "mimeType": .string("image/png")])],
                                 structuredContent: .object(["k": .string("v")]), isError: false)
        let cut = cap.cut(big)
        XCTAssertEqual(cut.content.first?["text"]?.stringValue, "ééééé", "10 bytes of 2-byte characters")
        XCTAssertEqual(cut.content.count, 2, "the image is dropped, a marker added")
        XCTAssertTrue(cut.content.last?["text"]?.stringValue?.contains("cut this tool result at 10 bytes") ?? false)
        XCTAssertNil(cut.structuredContent)
        let small = ToolCallResult.text("ok", isError: false)
        XCTAssertEqual(cap.cut(small), small)
        XCTAssertEqual(ToolResultLimit.modelText(big), "ééééééé\n[image: image/png]")
    }
}
