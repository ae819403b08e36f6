import Foundation
@testable import ParleyAPI
@testable import ParleyOpenAICompat
@testable import ParleyServer
import ParleyStore
import XCTest

/// Issue 18, item 2: what people type is shown exactly as typed. A user message has no `html` in the
/// API (only its `content`), wherever it came from: a send, an OpenAI-style transcript, an import (even
/// of a file that carries HTML), a fork, or a row an older version stored with HTML. Replies keep theirs.
final class PlainUserMessageTests: XCTestCase {
    /// Nine lines: indented Python, a blank line, `__init__`, `2*3*4` and backticks, all Markdown to cmark.
    static let typed = """
          leading spaces stay
        def __init__(self):
            self.total = 2*3*4

        `not code` and *not italic*
        - not a list
        # not a heading
        __not bold__
        ```
        """

    func testAUserMessageHasNoHTMLAndTheReplyKeepsIts() async throws {
        let parley = try startParley()
        let id = try await parley.conversation(["model": "demo"])
        let (userID, assistantID) = try await parley.send(id, Self.typed)
        _ = try await parley.finished(assistantID)

        let user = try await parley.message(userID)
        XCTAssertEqual(user["content"] as? String, Self.typed, "kept byte for byte")
        XCTAssertNil(user["html"], "no html key for a user message")
        let reply = try await parley.message(assistantID)
        XCTAssertTrue((reply["html"] as? String)?.hasPrefix("<") ?? false, "a reply still has its HTML")

        let shown = try await parley.call("GET", "/api/conversations/\(id)")
        let messages = try XCTUnwrap(shown.json["messages"] as? [[String: Any]])
        XCTAssertEqual(messages.map { $0["role"] as? String }, ["user", "assistant"])
        XCTAssertNil(messages[0]["html"])
        XCTAssertNotNil(messages[1]["html"] as? String)

        // A fork copies the rows: the user message stays plain.
        let fork = try await parley.call("POST", "/api/conversations/\(id)/fork", json: ["message_id": assistantID])
        XCTAssertEqual(fork.status, 201, fork.text)
        let copies = try XCTUnwrap(fork.json["messages"] as? [[String: Any]])
        XCTAssertEqual(copies.first?["content"] as? String, Self.typed)
        XCTAssertNil(copies.first?["html"])
        XCTAssertNotNil(copies.last?["html"] as? String)
    }

    func testAnImportedUserMessageIgnoresTheFilesHTML() async throws {
        let parley = try startParley()
        func message(_ id: String, parent: String?, role: String, content: String) -> [String: Any] {
            ["id": id, "parent_id": parent ?? NSNull(), "role": role, "content": content, "reasoning": "",
             "status": "complete", "finish_reason": NSNull(), "model": NSNull(), "usage": NSNull(), "error": NSNull(),
             "created_at": "2026-01-02T03:04:05.678Z", "updated_at": "2026-01-02T03:04:05.678Z",
             // What an older export may carry; never read.
             "html": "<p><strong>mangled</strong></p>"]
        }
        let document: [String: Any] = [
            "parley_export": 1, "title": "Old export", "model": NSNull(), "system_prompt": NSNull(), "pinned": false,
            "archived": false, "current_leaf_id": NSNull(), "created_at": "2026-01-02T03:04:05.678Z",
            "updated_at": "2026-01-02T03:04:05.678Z",
            "messages": [message("a", parent: nil, role: "user", content: Self.typed),
                         message("b", parent: "a", role: "assistant", content: "**bold** answer")],
        ]
        let imported = try await parley.call("POST", "/api/import", json: document)
        XCTAssertEqual(imported.status, 201, imported.text)
        let newID = try XCTUnwrap((imported.json["items"] as? [[String: Any]])?.first?["id"] as? String)
        let shown = try await parley.call("GET", "/api/conversations/\(newID)")
        let messages = try XCTUnwrap(shown.json["messages"] as? [[String: Any]])
        XCTAssertEqual(messages.first?["content"] as? String, Self.typed)
        XCTAssertNil(messages.first?["html"], "the file's html is ignored for a user message")
        XCTAssertEqual(messages.last?["html"] as? String, "<p><strong>bold</strong> answer</p>\n",
                       "a reply is rendered here, never taken from the file")
    }

    /// A row an older version wrote with HTML for a user (or system) message is still sent without it.
    func testStoredUserHTMLIsNeverSent() throws {
        for role in [Role.user, .system] {
            let message = Message(id: "m", conversationID: "c", parentID: nil, role: role, content: "2*3*4",
                                  reasoning: "", status: .complete, finishReason: nil, model: nil, usage: nil,
                                  errorCode: nil, errorMessage: nil, html: "<p>2<em>3</em>4</p>\n",
                                  createdAt: Date(), updatedAt: Date())
            let json = try XCTUnwrap(JSONSerialization.jsonObject(
                with: JSONEncoder().encode(MessageResource(message))) as? [String: Any])
            XCTAssertNil(json["html"], "\(role)")
            XCTAssertEqual(json["content"] as? String, "2*3*4")
        }
    }
}
