import Foundation
import ParleyTestSupport
import XCTest

/// `POST /api/conversations` with a `message` (issue 23): the conversation and its first turn in one
/// request, answered 201 `{conversation, user_message, assistant_message}`, the reply started as a send
/// starts it (its stream reads to `done`, the other tabs are told, the title job runs); without
/// `message` the route answers as it always has.
final class ConversationStartTests: XCTestCase {
    /// The user's conversations, archived or not.
    static func conversationIDs(_ parley: TestParley, as auth: (String, String)? = nil) async throws -> [String] {
        var ids: [String] = []
        for archived in ["false", "true"] {
            let path = "/api/conversations?archived=\(archived)"
            let reply: TestParley.Reply
            if let auth { reply = try await parley.call("GET", path, as: auth) } else { reply = try await parley.call("GET", path) }
            XCTAssertEqual(reply.status, 200, reply.text)
            ids += (reply.json["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        }
        return ids
    }

    func testOneRequestAnswersTheConversationAndItsTurnAndTheReplyStreamsToDone() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream)
        upstream.enqueue(UpstreamStreams.complete(["Hello", " there", " 👋"]))
        let reply = try await parley.call("POST", "/api/conversations", json: [
            "title": "Greetings", "system_prompt": "Be brief.", "model": "openai:fake", "temperature": 0.5,
            "message": ["content": "\u{FEFF}Hi\u{0}!"]])
        XCTAssertEqual(reply.status, 201, reply.text)
        XCTAssertEqual(Set(reply.json.keys), ["conversation", "user_message", "assistant_message"])
        let conversation = try XCTUnwrap(reply.json["conversation"] as? [String: Any])
        let user = try XCTUnwrap(reply.json["user_message"] as? [String: Any])
        let assistant = try XCTUnwrap(reply.json["assistant_message"] as? [String: Any])
        let id = try XCTUnwrap(conversation["id"] as? String)
        let assistantID = try XCTUnwrap(assistant["id"] as? String)
        XCTAssertEqual(conversation["title"] as? String, "Greetings")
        XCTAssertEqual(conversation["system_prompt"] as? String, "Be brief.")
        XCTAssertEqual(conversation["model"] as? String, "openai:fake")
        XCTAssertEqual(conversation["temperature"] as? Double, 0.5)
        XCTAssertEqual(conversation["current_leaf_id"] as? String, assistantID, "the conversation as it is now")
        XCTAssertNotNil(conversation["usage"], "a whole conversation resource")
        XCTAssertEqual(user["role"] as? String, "user")
        XCTAssertEqual(user["content"] as? String, "\u{FEFF}Hi\u{0}!", "every character kept")
        XCTAssertEqual(user["conversation_id"] as? String, id)
        XCTAssertEqual(assistant["role"] as? String, "assistant")
        XCTAssertEqual(assistant["status"] as? String, "streaming")
        XCTAssertEqual(assistant["parent_id"] as? String, user["id"] as? String)

        let stream = try await parley.events(assistantID, mode: "text")
        XCTAssertEqual(stream.status, 200)
        XCTAssertEqual(stream.text, "Hello there 👋")
        XCTAssertEqual(stream.done?["status"] as? String, "complete")
        // The upstream got the same request a send makes: system prompt, the message, the settings.
        let sent = try XCTUnwrap(upstream.requests.first?.jsonBody)
        XCTAssertEqual(sent["model"] as? String, "fake")
        XCTAssertEqual(sent["temperature"] as? Double, 0.5)
        let messages = sent["messages"] as? [[String: Any]] ?? []
        XCTAssertEqual(messages.map { $0["role"] as? String }, ["system", "user"])
        // (Read exactly: JSONSerialization would drop the leading U+FEFF.)
        let exact = try XCTUnwrap(ExactJSON.parse(try XCTUnwrap(upstream.requests.first).body))
        XCTAssertEqual(exact["messages"]?.array?.last?["content"]?.string, "\u{FEFF}Hi\u{0}!")

        let shown = try await parley.call("GET", "/api/conversations/\(id)")
        let branch = shown.json["messages"] as? [[String: Any]] ?? []
        XCTAssertEqual(branch.map { $0["id"] as? String }, [user["id"] as? String, assistantID])
        XCTAssertEqual(branch.last?["content"] as? String, "Hello there 👋")
        let listed = try await Self.conversationIDs(parley)
        XCTAssertEqual(listed, [id])
    }

    func testTheMessageTakesASendsFieldsAndFiles() async throws {
        let parley = try startParley()
        let uploaded = try await parley.call("POST", "/api/files?filename=notes.txt", body: Array("a note".utf8))
        XCTAssertEqual(uploaded.status, 201, uploaded.text)
        let fileID = try XCTUnwrap(uploaded.json["id"] as? String)
        // Files without text; the message's `model` answers this reply only, as a send's does.
        let reply = try await parley.call("POST", "/api/conversations", json: [
            "message": ["attachments": [fileID], "model": "demo"]])
        XCTAssertEqual(reply.status, 201, reply.text)
        let user = try XCTUnwrap(reply.json["user_message"] as? [String: Any])
        XCTAssertEqual(user["content"] as? String, "")
        let parts = user["parts"] as? [[String: Any]] ?? []
        XCTAssertEqual(parts.filter { $0["type"] as? String == "file" }.compactMap { $0["file_id"] as? String }, [fileID], "\(parts)")
        let conversation = try XCTUnwrap(reply.json["conversation"] as? [String: Any])
        XCTAssertTrue(conversation["model"] is NSNull, "the conversation keeps the default model")
        let assistant = try XCTUnwrap((reply.json["assistant_message"] as? [String: Any])?["id"] as? String)
        let finished = try await parley.finished(assistant)
        XCTAssertEqual(finished["status"] as? String, "complete")
        XCTAssertEqual(finished["model"] as? String, "demo")
    }

    func testWithoutAMessageTheRouteAnswersAsBefore() async throws {
        let parley = try startParley()
        for body: [String: Any] in [[:], ["title": "Plain"], ["title": "Null", "message": NSNull()]] {
            let reply = try await parley.call("POST", "/api/conversations", json: body)
            XCTAssertEqual(reply.status, 201, reply.text)
            XCTAssertNil(reply.json["conversation"], "the conversation itself, not wrapped")
            XCTAssertNil(reply.json["user_message"])
            let id = try XCTUnwrap(reply.json["id"] as? String)
            XCTAssertEqual(reply.json["title"] as? String, body["title"] as? String ?? "New conversation")
            XCTAssertTrue(reply.json["current_leaf_id"] is NSNull)
            let shown = try await parley.call("GET", "/api/conversations/\(id)")
            XCTAssertEqual((shown.json["messages"] as? [Any])?.count, 0, "no message was made")
        }
        // An empty body too (no JSON at all).
        let empty = try await parley.call("POST", "/api/conversations")
        XCTAssertEqual(empty.status, 201, empty.text)
        XCTAssertNotNil(empty.json["id"])
    }

    func testTheOtherTabsAreToldAsForTwoRequestsAndTheTitleJobRuns() async throws {
        let parley = try startParley(["PARLEY_TITLES": "words"])
        let ready = FakeUpstream.Gate()
        // Until both the title's `conversation_updated` and `reply_finished`: the title job and the end's
        // notice run side by side after the reply, in either order.
        async let read = parley.userEvents(ready: ready, until: { events in
            events.contains { $0.type == "conversation_updated" } && events.contains { $0.type == "reply_finished" }
        })
        let attached = await ready.waitUntilOpen()
        XCTAssertTrue(attached)
        let reply = try await parley.call("POST", "/api/conversations", json: [
            "message": ["content": "How do tides work near the equator"]])
        XCTAssertEqual(reply.status, 201, reply.text)
        let id = try XCTUnwrap((reply.json["conversation"] as? [String: Any])?["id"] as? String)
        let assistant = try XCTUnwrap((reply.json["assistant_message"] as? [String: Any])?["id"] as? String)
        _ = try await parley.finished(assistant)
        let events = try await read
        let types = events.notifications.map(\.type)
        XCTAssertEqual(Array(types.prefix(3)), ["conversation_created", "turn", "reply_started"], "\(types)")
        XCTAssertTrue(types.contains("reply_finished"), "\(types)")
        XCTAssertEqual(events.notifications.first?.data["conversation"].flatMap { ($0 as? [String: Any])?["id"] as? String }, id)
        // Named after its first reply (PARLEY_TITLES=words: the question's first six words).
        let renamed = try XCTUnwrap(events.notifications.last { $0.type == "conversation_updated" }?.data["conversation"] as? [String: Any])
        XCTAssertEqual(renamed["title"] as? String, "How do tides work near the")
    }
}
