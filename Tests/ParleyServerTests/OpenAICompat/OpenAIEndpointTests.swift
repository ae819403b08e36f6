import Foundation
import ParleyProviders
import ParleySSE
import ParleyTestSupport
import XCTest

/// `POST /v1/chat/completions` and `GET /v1/models` over real HTTP: OpenAI's shapes byte for byte
/// where clients depend on them, every call stored as a conversation of the caller, OpenAI's error
/// shape and statuses, and a client that leaves mid-stream stopping the reply and its upstream call.
final class OpenAIEndpointTests: XCTestCase {
    private func completion(_ parley: TestParley, _ body: [String: Any], headers: [(String, String)] = [])
        async throws -> TestParley.Reply {
        try await parley.call("POST", "/v1/chat/completions", json: body, headers: headers)
    }

    private func error(_ reply: TestParley.Reply) -> [String: Any] {
        reply.json["error"] as? [String: Any] ?? [:]
    }

    /// The `data:` payloads of an OpenAI stream, in order (`[DONE]` included as text).
    private func chunks(_ text: String) throws -> [String] {
        var decoder = SSEDecoder()
        return try decoder.decode(Array(text.utf8)).map(\.data)
    }

    func testANonStreamingCallIsStoredAsAConversationWithItsHistory() async throws {
        let parley = try startParley()
        let reply = try await completion(parley, [
            "model": "demo",
            "messages": [["role": "system", "content": "Be brief."], ["role": "user", "content": "first question"],
                         ["role": "assistant", "content": "first answer"],
                         ["role": "user", "content": [["type": "text", "text": "second "], ["type": "text", "text": "question"]]]],
        ])
        XCTAssertEqual(reply.status, 200, reply.text)
        XCTAssertEqual(reply.json["object"] as? String, "chat.completion")
        XCTAssertEqual(reply.json["model"] as? String, "demo")
        let choice = try XCTUnwrap((reply.json["choices"] as? [[String: Any]])?.first)
        let message = try XCTUnwrap(choice["message"] as? [String: Any])
        XCTAssertEqual(message["role"] as? String, "assistant")
        XCTAssertEqual(message["content"] as? String, DemoProvider.answer(to: "second question"))
        XCTAssertEqual(choice["finish_reason"] as? String, "stop")
        let usage = try XCTUnwrap(reply.json["usage"] as? [String: Any])
        let prompt = try XCTUnwrap(usage["prompt_tokens"] as? Int), output = try XCTUnwrap(usage["completion_tokens"] as? Int)
        XCTAssertEqual(usage["total_tokens"] as? Int, prompt + output)

        let conversationID = try XCTUnwrap(reply.headers["x-parley-conversation"])
        let messageID = try XCTUnwrap(reply.headers["x-parley-message"])
        XCTAssertEqual(reply.json["id"] as? String, "chatcmpl-" + messageID)
        let stored = try await parley.call("GET", "/api/conversations/\(conversationID)")
        XCTAssertEqual(stored.json["system_prompt"] as? String, "Be brief.")
        XCTAssertEqual(stored.json["model"] as? String, "demo")
        let messages = try XCTUnwrap(stored.json["messages"] as? [[String: Any]])
        XCTAssertEqual(messages.map { $0["role"] as? String }, ["user", "assistant", "user", "assistant"])
        XCTAssertEqual(messages.map { $0["content"] as? String },
                       ["first question", "first answer", "second question", DemoProvider.answer(to: "second question")])
        XCTAssertTrue(messages[1]["usage"] is NSNull, "a turn the client brought was not generated here")
        XCTAssertEqual((messages[3]["usage"] as? [String: Any])?["output_tokens"] as? Int, output)
        XCTAssertEqual((stored.json["usage"] as? [String: Any])?["replies"] as? Int, 1)
    }

    func testStreamingFollowsOpenAIsChunkFormatWithUsage() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(.openAIChat(tokens: ["Hel", "lo ", "wörld"]))  // no usage: Parley estimates it
        let parley = try startParley(upstream: upstream)
        let reply = try await completion(parley, [
            "model": "openai:fake", "stream": true, "stream_options": ["include_usage": true],
            "temperature": 0.25, "top_p": 0.5, "max_tokens": 40,
            "messages": [["role": "user", "content": "hi"]],
        ])
        XCTAssertEqual(reply.status, 200, reply.text)
        XCTAssertTrue(reply.headers["content-type"]?.hasPrefix("text/event-stream") ?? false)
        let data = try chunks(reply.text)
        XCTAssertEqual(data.last, "[DONE]", reply.text)
        let objects = data.dropLast().compactMap { ExactJSON.parse($0)?.foundation as? [String: Any] }
        XCTAssertEqual(objects.count, data.count - 1, "every chunk but the last is JSON")
        let id = try XCTUnwrap(objects.first?["id"] as? String)
        for object in objects {
            XCTAssertEqual(object["object"] as? String, "chat.completion.chunk")
            XCTAssertEqual(object["id"] as? String, id, "one id for the whole reply")
            XCTAssertEqual(object["model"] as? String, "openai:fake")
            XCTAssertNotNil(object["created"] as? Int)
            XCTAssertTrue(object.keys.contains("usage"), "include_usage: every chunk has the key")
        }
        let choices = objects.map { $0["choices"] as? [[String: Any]] ?? [] }
        XCTAssertEqual((choices[0].first?["delta"] as? [String: Any])?["role"] as? String, "assistant",
                       "the role comes in the first delta")
        let text = choices.compactMap { ($0.first?["delta"] as? [String: Any])?["content"] as? String }.joined()
        XCTAssertEqual(text, "Hello wörld")
        let reasons = choices.compactMap { $0.first?["finish_reason"] as? String }
        XCTAssertEqual(reasons, ["stop"], "only the last choice chunk has a finish reason")
        XCTAssertTrue(choices.last?.isEmpty ?? false, "the usage chunk has no choices")
        let usage = try XCTUnwrap(objects.last?["usage"] as? [String: Any])
        XCTAssertEqual(usage["completion_tokens"] as? Int, "Hello wörld".utf8.count / 4, "estimated: bytes / 4")
        XCTAssertEqual(usage["prompt_tokens"] as? Int, 0, "\"hi\" is 2 bytes: 0 tokens estimated")
        XCTAssertTrue(objects.dropLast().allSatisfy { $0["usage"] is NSNull })

        // The request's settings reached the provider; the stored reply is marked estimated.
        let sent = try XCTUnwrap(upstream.requests.last?.jsonBody)
        XCTAssertEqual(sent["temperature"] as? Double, 0.25)
        XCTAssertEqual(sent["top_p"] as? Double, 0.5)
        XCTAssertEqual(sent["max_tokens"] as? Int, 40)
        let stored = try await parley.message(try XCTUnwrap(reply.headers["x-parley-message"]))
        XCTAssertEqual(stored["status"] as? String, "complete")
        XCTAssertEqual((stored["usage"] as? [String: Any])?["estimated"] as? Bool, true)
    }

    func testWithoutIncludeUsageNoChunkCarriesUsage() async throws {
        let parley = try startParley()
        let reply = try await completion(parley, ["model": "demo", "stream": true,
                                                  "messages": [["role": "user", "content": "hi"]]])
        let data = try chunks(reply.text)
        XCTAssertEqual(data.last, "[DONE]")
        XCTAssertFalse(reply.text.contains("\"usage\""), reply.text)
        let last = try XCTUnwrap(ExactJSON.parse(data[data.count - 2])?.foundation as? [String: Any])
        XCTAssertEqual((last["choices"] as? [[String: Any]])?.first?["finish_reason"] as? String, "stop")
    }

    func testTheConversationHeaderAppendsToTheCallersOwnConversationOnly() async throws {
        let parley = try startTeamParley()
        let alice = try Team.bearer(parley, "alice"), bob = try Team.bearer(parley, "bob")
        let first = try await completion(parley, ["model": "demo", "messages": [["role": "user", "content": "one"]]],
                                         headers: [alice])
        let conversation = try XCTUnwrap(first.headers["x-parley-conversation"])
        let second = try await completion(parley, [
            "model": "demo", "temperature": 1.5,
            "messages": [["role": "user", "content": "one"], ["role": "assistant", "content": "ignored"],
                         ["role": "user", "content": "two"]],
        ], headers: [alice, ("X-Parley-Conversation", conversation)])
        XCTAssertEqual(second.status, 200, second.text)
        XCTAssertEqual(second.headers["x-parley-conversation"], conversation)
        let shown = try await parley.call("GET", "/api/conversations/\(conversation)", as: alice)
        let contents = (shown.json["messages"] as? [[String: Any]] ?? []).map { $0["content"] as? String ?? "" }
        XCTAssertEqual(contents, ["one", DemoProvider.answer(to: "one"), "two", DemoProvider.answer(to: "two")],
                       "the stored branch is the context: only the last user message is appended")
        XCTAssertTrue(shown.json["temperature"] is NSNull, "a call's settings apply to that call only")

        let foreign = try await completion(parley, ["model": "demo", "messages": [["role": "user", "content": "x"]]],
                                           headers: [bob, ("X-Parley-Conversation", conversation)])
        XCTAssertEqual(foreign.status, 404, foreign.text)
        XCTAssertEqual(error(foreign)["code"] as? String, "conversation_not_found")
        XCTAssertEqual(error(foreign)["type"] as? String, "invalid_request_error")
        XCTAssertEqual(Set(error(foreign).keys), ["message", "type", "param", "code"])
        let bobs = try await parley.call("GET", "/api/conversations", as: bob)
        XCTAssertTrue(bobs.items.isEmpty, "the refused call stored nothing")
    }

    func testABadTokenIs401InOpenAIsShape() async throws {
        let parley = try startTeamParley()
        for headers in [[("Authorization", "Bearer pt_not-a-token")], []] {
            for (method, path) in [("POST", "/v1/chat/completions"), ("GET", "/v1/models")] {
                let reply = try await parley.call(method, path, json: method == "POST" ? ["model": "demo"] : nil,
                                                  headers: headers)
                XCTAssertEqual(reply.status, 401, reply.text)
                XCTAssertEqual(error(reply)["code"] as? String, "invalid_api_key")
                XCTAssertEqual(error(reply)["type"] as? String, "authentication_error")
                XCTAssertTrue(error(reply)["param"] is NSNull)
            }
        }
        let models = try await parley.call("GET", "/v1/models", headers: [try Team.bearer(parley, "carol")])
        XCTAssertEqual(models.status, 200, models.text)
    }

    func testAModelAMemberMayNotUseIsNotFound() async throws {
        let upstream = try startUpstream()
        let parley = try startTeamParley(upstream: upstream, ["PARLEY_OPENAI_MODELS": "fake,other",
                                                              "PARLEY_MEMBER_MODELS": "openai:other"])
        let bob = try Team.bearer(parley, "bob")
        let models = try await parley.call("GET", "/v1/models", headers: [bob])
        XCTAssertEqual((models.json["data"] as? [[String: Any]])?.map { $0["id"] as? String }, ["openai:other"],
                       models.text)
        let refused = try await completion(parley, ["model": "openai:fake", "messages": [["role": "user", "content": "x"]]],
                                           headers: [bob])
        XCTAssertEqual(refused.status, 404, refused.text)
        XCTAssertEqual(error(refused)["code"] as? String, "model_not_found")
        XCTAssertTrue(upstream.requests.isEmpty, "nothing was asked of the model")
    }

    func testLocalModeAcceptsAnyKeyAndListsModels() async throws {
        let parley = try startParley()
        let models = try await parley.call("GET", "/v1/models", headers: [("Authorization", "Bearer anything")])
        XCTAssertEqual(models.status, 200, models.text)
        XCTAssertEqual(models.json["object"] as? String, "list")
        let data = try XCTUnwrap(models.json["data"] as? [[String: Any]])
        XCTAssertEqual(data.first?["id"] as? String, "demo")
        XCTAssertEqual(data.first?["object"] as? String, "model")
        XCTAssertEqual(data.first?["owned_by"] as? String, "demo")
    }

    func testInvalidRequestsAreRefusedInOpenAIsShapeAndStoreNothing() async throws {
        let parley = try startParley(["PARLEY_MAX_TOKENS_LIMIT": "100"])
        let user = [["role": "user", "content": "hi"]]
        let cases: [(body: [String: Any], status: Int, param: String?, code: String)] = [
            (["model": "no-such-model", "messages": user], 404, "model", "model_not_found"),
            (["model": "openai:nothing", "messages": user], 404, "model", "model_not_found"),
            (["messages": user], 400, "model", "invalid_request"),
            (["model": "demo"], 400, "messages", "invalid_request"),
            (["model": "demo", "messages": []], 400, "messages", "invalid_request"),
            (["model": "demo", "messages": "hi"], 400, "messages", "invalid_request"),
            (["model": "demo", "messages": [["role": "assistant", "content": "hi"]]], 400, "messages", "invalid_request"),
            (["model": "demo", "messages": [["role": "tool", "content": "x"], ["role": "user", "content": "y"]]],
             400, "messages", "invalid_request"),
            (["model": "demo", "messages": [["role": "user", "content": [["type": "image_url", "image_url": ["url": "x"]]]]]],
             400, "messages", "invalid_data_url"),
            (["model": "demo", "messages": [["role": "user", "content": ""]]], 400, "messages", "invalid_request"),
            (["model": "demo", "messages": user, "n": 2], 400, "n", "invalid_request"),
            (["model": "demo", "messages": user, "temperature": 2.5], 400, "temperature", "invalid_request"),
            (["model": "demo", "messages": user, "top_p": -0.1], 400, "top_p", "invalid_request"),
            (["model": "demo", "messages": user, "max_tokens": 101], 400, "max_tokens", "invalid_request"),
            (["model": "demo", "messages": user, "max_tokens": 0], 400, "max_tokens", "invalid_request"),
            (["model": "demo", "messages": user, "temperature": "hot"], 400, "temperature", "invalid_request"),
            (["model": "demo", "messages": user, "stream": "yes"], 400, "stream", "invalid_request"),
        ]
        for (body, status, param, code) in cases {
            let reply = try await completion(parley, body)
            XCTAssertEqual(reply.status, status, "\(body): \(reply.text)")
            XCTAssertEqual(error(reply)["code"] as? String, code, "\(body)")
            XCTAssertEqual(error(reply)["param"] as? String, param, "\(body)")
            XCTAssertFalse((error(reply)["message"] as? String ?? "").isEmpty)
        }
        let notJSON = try await parley.call("POST", "/v1/chat/completions", body: Array("{".utf8))
        XCTAssertEqual(notJSON.status, 400, notJSON.text)
        XCTAssertNotNil(error(notJSON)["type"] as? String)
        let list = try await parley.call("GET", "/api/conversations")
        XCTAssertTrue(list.items.isEmpty, "no refused call left a conversation: \(list.text)")
    }

    func testTheMessagesPerMinuteQuotaIs429RateLimit() async throws {
        let parley = try startParley(["PARLEY_USER_MESSAGES_PER_MINUTE": "1"])
        let body: [String: Any] = ["model": "demo", "messages": [["role": "user", "content": "hi"]]]
        let first = try await completion(parley, body)
        XCTAssertEqual(first.status, 200, first.text)
        let second = try await completion(parley, body)
        XCTAssertEqual(second.status, 429, second.text)
        XCTAssertEqual(error(second)["type"] as? String, "rate_limit_error")
        XCTAssertNotNil(second.headers["retry-after"])
    }

    func testAnUpstreamFailureIs502ServerError() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(.json("{\"error\":{\"message\":\"bad\"}}", status: 400))
        let parley = try startParley(upstream: upstream)
        let reply = try await completion(parley, ["model": "openai:fake", "messages": [["role": "user", "content": "hi"]]])
        XCTAssertEqual(reply.status, 502, reply.text)
        XCTAssertEqual(error(reply)["type"] as? String, "server_error")
    }

    func testAClientThatLeavesMidStreamStopsTheReplyAndItsUpstreamCall() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(UpstreamStreams.stalling(after: ["first words"]))
        let parley = try startParley(upstream: upstream)
        let body = #"{"model":"openai:fake","stream":true,"messages":[{"role":"user","content":"hi"}]}"#
        let connection = try RawConnection(port: parley.app.port)
        XCTAssertTrue(connection.send("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                      + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                                      + body))
        // Read until the first content chunk has arrived, then hang up.
        var received = ""
        let deadline = Date().addingTimeInterval(20)
        while !received.contains("first words"), Date() < deadline {
            received += connection.readUntilClosed(timeout: 0.2).text
        }
        XCTAssertTrue(received.contains("first words"), received)
        let messageID = try XCTUnwrap(received.split(separator: "\r\n")
            .first { $0.lowercased().hasPrefix("x-parley-message:") }?
            .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces))
        connection.close()
        let gone = await upstream.waitForDisconnect(timeout: .seconds(10))
        XCTAssertNotNil(gone, "the upstream call was aborted")
        let stored = try await parley.finished(messageID)
        XCTAssertEqual(stored["status"] as? String, "stopped")
        XCTAssertEqual(stored["content"] as? String, "first words")
        XCTAssertEqual((stored["usage"] as? [String: Any])?["estimated"] as? Bool, true)
    }
}
