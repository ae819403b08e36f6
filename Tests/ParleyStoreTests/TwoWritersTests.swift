import Foundation
import ParleyStore
import Synchronization
import XCTest

/// Two stores on one database, as two nodes' writers are (on PostgreSQL they write at once): a tool call
/// decided by both at the same moment is decided once (the other gets `conflict`), and a reply continued
/// by both at once is continued once; a conversation deleted on one node while another writes its
/// reply's end both succeed (PostgreSQL may undo one as a deadlock: it runs again). 20 races each, the
/// two calls released together.
final class TwoWritersTests: StoreTestCase {
    /// Runs `body(0)` and `body(1)` on two threads released at once; their results in order.
    private func race<T: Sendable>(_ body: @escaping @Sendable (Int) -> T) -> [T] {
        let results = Mutex<[Int: T]>([:])
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        for index in 0..<2 {
            group.enter()
            Thread.detachNewThread {
                start.wait()
                let value = body(index)
                results.withLock { $0[index] = value }
                group.leave()
            }
        }
        start.signal()
        start.signal()
        group.wait()
        return results.withLock { [$0[0]!, $0[1]!] }
    }

    func testACallDecidedOnTwoNodesAtOnceIsDecidedOnce() throws {
        let nodes = [try makeStore(), try makeStore()]
        let conversation = try nodes[0].createConversation()
        for run in 0..<20 {
            let reply = try nodes[0].appendTurn(conversationID: conversation.id, parentID: nil, userContent: "q\(run)",
                                                model: "m").assistant
            let call = ToolCallPart(id: "a", providerID: "call_a", tool: "docs/delete", name: "docs__delete",
                                    argumentsText: "{}", arguments: .object([:]), status: .awaitingApproval)
            _ = try nodes[0].finishMessage(id: reply.id, content: "", status: .awaitingApproval, finishReason: .toolCalls,
                                           parts: [.toolCall(call)])
            let decided = race { index in
                (try? nodes[index].decideToolCall(messageID: reply.id, callID: "a", decision: .approve,
                                                  ownedBy: User.localID)) != nil
            }
            XCTAssertEqual(decided.filter { $0 }.count, 1, "run \(run): \(decided)")
        }
    }

    func testAReplyContinuedOnTwoNodesAtOnceIsContinuedOnce() throws {
        let nodes = [try makeStore(), try makeStore()]
        let conversation = try nodes[0].createConversation()
        for run in 0..<20 {
            let reply = try nodes[0].appendTurn(conversationID: conversation.id, parentID: nil, userContent: "q\(run)",
                                                model: "m").assistant
            _ = try nodes[0].finishMessage(id: reply.id, content: "Half", status: .stopped)
            let continued = race { index in (try? nodes[index].beginContinue(id: reply.id)) != nil }
            XCTAssertEqual(continued.filter { $0 }.count, 1, "run \(run): \(continued)")
            _ = try nodes[0].finishMessage(id: reply.id, content: "Half and more", status: .complete)
        }
    }

    func testADeleteOnOneNodeAndTheReplysEndOnAnotherBothSucceed() throws {
        let nodes = [try makeStore(), try makeStore()]
        for run in 0..<20 {
            let conversation = try nodes[0].createConversation()
            let reply = try nodes[0].appendTurn(conversationID: conversation.id, parentID: nil, userContent: "q\(run)",
                                                model: "m").assistant
            let outcomes = race { index -> String in
                do {
                    if index == 0 { return try nodes[0].deleteConversation(id: conversation.id) ? "deleted" : "absent" }
                    _ = try nodes[1].finishMessage(id: reply.id, content: "Ende", status: .stopped,
                                                   usage: ReplyTokens(inputTokens: 3, outputTokens: 1), model: "m")
                    return "finished"
                } catch StoreError.notFound {
                    return "gone"
                } catch {
                    return "\(error)"
                }
            }
            XCTAssertEqual(outcomes[0], "deleted", "run \(run)")
            XCTAssertTrue(["finished", "gone"].contains(outcomes[1]), "run \(run): \(outcomes[1])")
            XCTAssertNil(try nodes[1].conversation(id: conversation.id))
        }
    }
}
