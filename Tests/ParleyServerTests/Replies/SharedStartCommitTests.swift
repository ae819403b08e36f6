import Foundation
@testable import ParleyStore
import ParleyTestSupport
import XCTest

/// Starts that arrive together share commits (`Store.beginTurnInSharedCommit`): through the real
/// server, every 201 means its rows are stored, and a start refused inside a batch (an unknown parent)
/// leaves the others of the burst alone.
final class SharedStartCommitTests: XCTestCase {
    func testABurstOfStartsIsStoredAndOneRefusedStartLeavesTheOthers() async throws {
        let parley = try startParley(["PARLEY_MAX_GENERATIONS": "100", "PARLEY_MAX_GENERATIONS_PER_USER": "100",
                                      "PARLEY_USER_MESSAGES_PER_MINUTE": "1000"])
        let count = 24
        let conversations = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<count { group.addTask { try await parley.conversation(["model": "demo"]) } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        let answers = try await withThrowingTaskGroup(of: (String, TestParley.Reply).self) { group in
            for (index, id) in conversations.enumerated() {
                group.addTask {
                    // One of the burst names a parent that does not exist: refused by the store inside the write.
                    let fields: [String: Any] = index == 0
                        ? ["content": "orphan", "parent_id": "no-such-message"] : ["content": "Q\(index)"]
                    return (id, try await parley.call("POST", "/api/conversations/\(id)/messages", json: fields))
                }
            }
            return try await group.reduce(into: [(String, TestParley.Reply)]()) { $0.append($1) }
        }
        let other = try Store(path: parley.directory.appendingPathComponent("parley.db").path)
        for (conversationID, reply) in answers {
            if conversationID == conversations[0] {
                XCTAssertEqual(reply.status, 400, reply.text)
                XCTAssertEqual(reply.errorCode, "invalid_parent", reply.text)
                XCTAssertEqual(try other.messages(conversationID: conversationID), [], "nothing of it was written")
                continue
            }
            XCTAssertEqual(reply.status, 201, reply.text)
            let user = try XCTUnwrap((reply.json["user_message"] as? [String: Any])?["id"] as? String)
            let assistant = try XCTUnwrap((reply.json["assistant_message"] as? [String: Any])?["id"] as? String)
            // Answered means committed: another connection to the file sees the rows.
            XCTAssertEqual(try other.message(id: user)?.conversationID, conversationID)
            XCTAssertEqual(try other.message(id: assistant)?.parentID, user)
            let finished = try await parley.finished(assistant)
            XCTAssertEqual(finished["status"] as? String, "complete")
        }
        // Every conversation and every start went through the shared commits (how many shared a
        // transaction depends on how the requests met; SharedCommitTests pins that down).
        XCTAssertEqual(parley.app.store.sharedCommits.counts.writes, 2 * count)
    }
}
