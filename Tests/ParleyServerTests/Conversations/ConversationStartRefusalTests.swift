import Foundation
import ParleyTestSupport
import XCTest

/// `POST /api/conversations` with a `message` refuses what a send refuses, with the same answers, and a
/// refused start leaves nothing behind: no conversation, no message, no notification. Bad input is 400
/// naming the field; another user's file id is 404 like an unknown one; in team mode the conversation
/// is the caller's alone.
final class ConversationStartRefusalTests: XCTestCase {
    /// Uploads `bytes` as `auth` (nil: local mode); returns the file's id.
    private func upload(_ parley: TestParley, _ bytes: [UInt8], filename: String,
                        as auth: (String, String)? = nil) async throws -> String {
        let url = parley.base + "/api/files?filename=\(filename)"
        let response = try await Blocking.run {
            try TestHTTPClient().request("POST", url, headers: [("Content-Type", "application/octet-stream")]
                                            + (auth.map { [$0] } ?? []), body: bytes, timeout: 60)
        }
        XCTAssertEqual(response.status, 201, response.text)
        return try XCTUnwrap(ExactJSON.parse(response.text)?.foundation as? [String: Any])["id"] as? String ?? ""
    }

    private func start(_ parley: TestParley, _ body: [String: Any],
                       as auth: (String, String)? = nil) async throws -> TestParley.Reply {
        if let auth { return try await parley.call("POST", "/api/conversations", as: auth, json: body) }
        return try await parley.call("POST", "/api/conversations", json: body)
    }

    func testBadMessagesAre400NamingTheFieldAndMakeNothing() async throws {
        let parley = try startParley()
        let cases: [(body: [String: Any], code: String, names: String)] = [
            (["message": "hello"], "invalid_request", "'message' must be an object"),
            (["message": ["hello"]], "invalid_request", "'message' must be an object"),
            (["message": 5], "invalid_request", "'message' must be an object"),
            (["message": [:]], "invalid_request", "'message.content' is required"),
            (["message": ["content": 5]], "invalid_request", "'message.content' must be a string"),
            (["message": ["content": ["text"]]], "invalid_request", "'message.content' must be a string"),
            (["message": ["content": ""]], "invalid_request", "'message.content' must not be empty"),
            (["message": ["content": NSNull()]], "invalid_request", "'message.content' is required"),
            (["message": ["content": "hi", "attachments": "f1"]], "invalid_request", "'message.attachments' must be"),
            (["message": ["content": "hi", "attachments": [5]]], "invalid_request", "'message.attachments' must be"),
            (["message": ["content": "hi", "attachments": [""]]], "invalid_request", "'message.attachments' must be"),
            (["message": ["content": "hi", "attachments": Array(repeating: "f", count: 11)]], "invalid_request",
             "'message.attachments' may hold at most 10"),
            (["message": ["content": "hi", "parent_id": NSNull()]], "invalid_request", "'message.parent_id'"),
            (["message": ["content": "hi", "parent_id": "m1"]], "invalid_request", "'message.parent_id'"),
            (["message": ["content": "hi", "model": 5]], "invalid_request", "'message.model' must be a string"),
            (["message": ["content": "hi", "model": "nope"]], "unknown_model", "nope"),
            // The conversation's own fields are checked first, as the create of two requests would.
            (["title": "", "message": ["content": "hi"]], "invalid_request", "title"),
            (["temperature": 3, "message": ["content": "hi"]], "invalid_request", "temperature"),
        ]
        for (body, code, names) in cases {
            let reply = try await start(parley, body)
            XCTAssertEqual(reply.status, 400, "\(body): \(reply.text)")
            XCTAssertEqual(reply.errorCode, code, "\(body): \(reply.text)")
            let message = (reply.json["error"] as? [String: Any])?["message"] as? String ?? ""
            XCTAssertTrue(message.contains(names), "\(body): \(message)")
        }
        let left = try await ConversationStartTests.conversationIDs(parley)
        XCTAssertEqual(left, [], "no refused start made a conversation")
    }

    func testAMessagePastTheBodyLimitIs413AndMakesNothing() async throws {
        let parley = try startParley(["PARLEY_MAX_BODY_BYTES": "4096"])
        let fits = try await start(parley, ["message": ["content": String(repeating: "a", count: 3000)]])
        XCTAssertEqual(fits.status, 201, fits.text)
        let tooLong = try await start(parley, ["message": ["content": String(repeating: "a", count: 5000)]])
        XCTAssertEqual(tooLong.status, 413, tooLong.text)
        XCTAssertEqual(tooLong.errorCode, "payload_too_large")
        let left = try await ConversationStartTests.conversationIDs(parley)
        XCTAssertEqual(left.count, 1, "only the one that fits")
    }

    func testAnotherUsersOrAnUnknownFileIs404AndTheStartIsTheCallersAlone() async throws {
        let parley = try startTeamParley()
        let owner = try Team.bearer(parley, "owner")
        let other = try Team.bearer(parley, "other")
        let fileID = try await upload(parley, Array("secret notes".utf8), filename: "notes.txt", as: owner)
        for attachments in [[fileID], ["f_does_not_exist"]] {
            let refused = try await start(parley, ["message": ["content": "read this", "attachments": attachments]],
                                          as: other)
            XCTAssertEqual(refused.status, 404, refused.text)
            XCTAssertEqual(refused.errorCode, "not_found")
        }
        let othersAfterRefusals = try await ConversationStartTests.conversationIDs(parley, as: other)
        XCTAssertEqual(othersAfterRefusals, [], "nothing was made")
        let anonymous = try await parley.call("POST", "/api/conversations", json: ["message": ["content": "hi"]])
        XCTAssertEqual(anonymous.status, 401)

        // The owner's start with their own file: theirs only.
        let started = try await start(parley, ["message": ["content": "read this", "attachments": [fileID]]], as: owner)
        XCTAssertEqual(started.status, 201, started.text)
        let id = try XCTUnwrap((started.json["conversation"] as? [String: Any])?["id"] as? String)
        let assistant = try XCTUnwrap((started.json["assistant_message"] as? [String: Any])?["id"] as? String)
        let user = try XCTUnwrap((started.json["user_message"] as? [String: Any])?["id"] as? String)
        _ = try await parley.finished(assistant, headers: [owner])
        for path in ["/api/conversations/\(id)", "/api/messages/\(assistant)", "/api/messages/\(user)",
                     "/api/messages/\(assistant)/stream"] {
            let foreign = try await parley.call("GET", path, as: other)
            XCTAssertEqual(foreign.status, 404, path)
            XCTAssertEqual(foreign.errorCode, "not_found", path)
        }
        let foreignSend = try await parley.call("POST", "/api/conversations/\(id)/messages", as: other,
                                                json: ["content": "hi"])
        XCTAssertEqual(foreignSend.status, 404)
        let others = try await ConversationStartTests.conversationIDs(parley, as: other)
        XCTAssertEqual(others, [])
        let owners = try await ConversationStartTests.conversationIDs(parley, as: owner)
        XCTAssertEqual(owners, [id])
    }

    func testAnImageForAModelThatCannotSeeIsRefusedBeforeAnything() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream)
        let imageID = try await upload(parley, TestPNG.make(width: 20, height: 10, seed: 3), filename: "p.png")
        for body: [String: Any] in [["model": "openai:fake", "message": ["content": "look", "attachments": [imageID]]],
                                    ["message": ["content": "look", "attachments": [imageID], "model": "openai:fake"]]] {
            let refused = try await start(parley, body)
            XCTAssertEqual(refused.status, 400, refused.text)
            XCTAssertEqual(refused.errorCode, "model_cannot_see_images")
        }
        XCTAssertEqual(upstream.requests.count, 0, "refused before any call")
        let left = try await ConversationStartTests.conversationIDs(parley)
        XCTAssertEqual(left, [])
    }

    func testTheMessagesPerMinuteRefuseAStartAndItMakesNothing() async throws {
        let parley = try startParley(["PARLEY_USER_MESSAGES_PER_MINUTE": "1"])
        let first = try await start(parley, ["message": ["content": "one"]])
        XCTAssertEqual(first.status, 201, first.text)
        let second = try await start(parley, ["message": ["content": "two"]])
        XCTAssertEqual(second.status, 429, second.text)
        XCTAssertEqual(second.errorCode, "rate_limited")
        XCTAssertNotNil(second.headers["retry-after"])
        // A conversation without a message is no message: it is made as before.
        let plain = try await start(parley, ["title": "Later"])
        XCTAssertEqual(plain.status, 201, plain.text)
        let left = try await ConversationStartTests.conversationIDs(parley)
        XCTAssertEqual(left.count, 2, "the first start and the plain conversation")
    }

    /// The caps on live replies are checked once the conversation exists (where a send checks them):
    /// the conversation is deleted again, and no other tab ever hears of it.
    func testAStartRefusedAfterTheConversationIsMadeDeletesItUntold() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream, ["PARLEY_MAX_GENERATIONS_PER_USER": "1"])
        upstream.enqueue(UpstreamStreams.stalling(after: ["thinking"]))
        let held = try await start(parley, ["message": ["content": "first"]])
        XCTAssertEqual(held.status, 201, held.text)
        let heldID = try XCTUnwrap((held.json["conversation"] as? [String: Any])?["id"] as? String)
        let heldReply = try XCTUnwrap((held.json["assistant_message"] as? [String: Any])?["id"] as? String)

        let ready = FakeUpstream.Gate()
        async let read = parley.userEvents(ready: ready, window: 1.5)
        let attached = await ready.waitUntilOpen()
        XCTAssertTrue(attached)
        let refused = try await start(parley, ["title": "Second", "message": ["content": "second"]])
        XCTAssertEqual(refused.status, 429, refused.text)
        XCTAssertEqual(refused.errorCode, "too_many_generations")
        let left = try await ConversationStartTests.conversationIDs(parley)
        XCTAssertEqual(left, [heldID], "the refused start's conversation is gone")
        let events = try await read
        XCTAssertEqual(events.notifications.map(\.type), [], "no tab heard of it")
        XCTAssertEqual(upstream.requests.count, 1, "only the held reply called the model")

        let stopped = try await parley.call("POST", "/api/messages/\(heldReply)/stop")
        XCTAssertEqual(stopped.status, 200, stopped.text)
        let again = try await start(parley, ["message": ["content": "second"]])
        XCTAssertEqual(again.status, 201, "a slot is free again: \(again.text)")
    }
}
