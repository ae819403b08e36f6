import Foundation
import ParleyTestSupport
import XCTest

/// `POST /v1/chat/completions`'s options beyond messages and sampling (`stop`, `seed`, penalties,
/// `logprobs`, `user`, `response_format`): forwarded as given to a provider that honours them, each bad
/// value a 400 naming it, and a provider that cannot honour one refuses it by name before anything is
/// stored or sent. Nothing is silently ignored.
final class OpenAIParameterTests: XCTestCase {
    private let messages = #""messages":[{"role":"user","content":"hi"}]"#

    /// A raw body, so that key order and number spelling are the client's.
    private func post(_ parley: TestParley, _ json: String) async throws -> TestParley.Reply {
        try await parley.call("POST", "/v1/chat/completions", body: Array(json.utf8))
    }

    private func assertRefused(_ reply: TestParley.Reply, param: String, file: StaticString = #filePath,
                               line: UInt = #line) {
        XCTAssertEqual(reply.status, 400, reply.text, file: file, line: line)
        let error = reply.json["error"] as? [String: Any] ?? [:]
        XCTAssertEqual(error["param"] as? String, param, reply.text, file: file, line: line)
        XCTAssertEqual(error["type"] as? String, "invalid_request_error", file: file, line: line)
        XCTAssertTrue((error["message"] as? String ?? "").contains(param), reply.text, file: file, line: line)
    }

    func testEveryOptionReachesAnOpenAICompatibleUpstreamAsGiven() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(.openAIChat(tokens: ["{}"]), .openAIChat(tokens: ["ok"]))
        let parley = try startParley(upstream: upstream)
        let format = #"{"type":"json_schema","json_schema":{"name":"answer","strict":true,"#
            + #""schema":{"type":"object","properties":{"z":{"type":"number"},"a":{"type":"string"}},"required":["z","a"]}}}"#
        let reply = try await post(parley, #"{"model":"openai:fake","# + messages + #","stop":["END","</s>"],"seed":42,"#
            + #""presence_penalty":-1.5,"frequency_penalty":2,"logprobs":false,"user":"user-7","response_format":"#
            + format + "}")
        XCTAssertEqual(reply.status, 200, reply.text)
        let sent = try XCTUnwrap(upstream.requests.last?.jsonBody)
        let given = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(format.utf8)) as? NSDictionary)
        XCTAssertEqual(sent["response_format"] as? NSDictionary, given, "the schema, the same JSON value")
        XCTAssertEqual(sent["stop"] as? [String], ["END", "</s>"])
        XCTAssertEqual(sent["seed"] as? Int, 42)
        XCTAssertEqual(sent["presence_penalty"] as? Double, -1.5)
        XCTAssertEqual(sent["frequency_penalty"] as? Double, 2)
        XCTAssertEqual(sent["logprobs"] as? Bool, false)
        XCTAssertEqual(sent["user"] as? String, "user-7")

        // A single stop string stays a string; a call without options sends none of the keys.
        let single = try await post(parley, #"{"model":"openai:fake","stop":"\n\n","response_format":{"type":"text"},"#
                                    + messages + "}")
        XCTAssertEqual(single.status, 200, single.text)
        let second = try XCTUnwrap(upstream.requests.last?.jsonBody)
        XCTAssertEqual(second["stop"] as? String, "\n\n")
        XCTAssertEqual(second["response_format"] as? [String: String], ["type": "text"])
        XCTAssertEqual(Set(second.keys).intersection(["seed", "user", "logprobs", "presence_penalty"]), [])
    }

    func testEachBadValueIsA400NamingItsParameter() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream)
        let cases: [(String, String)] = [
            (#""stop":["a","b","c","d","e"]"#, "stop"), (#""stop":7"#, "stop"), (#""stop":[""]"#, "stop"),
            (#""seed":1.5"#, "seed"), (#""seed":"1""#, "seed"),
            (#""presence_penalty":2.5"#, "presence_penalty"), (#""frequency_penalty":-3"#, "frequency_penalty"),
            (#""frequency_penalty":"high""#, "frequency_penalty"),
            (#""logprobs":"yes""#, "logprobs"),
            (#""logprobs":true,"top_logprobs":21"#, "top_logprobs"), (#""top_logprobs":2"#, "top_logprobs"),
            (#""user":7"#, "user"), ("\"user\":\"" + String(repeating: "u", count: 257) + "\"", "user"),
            (#""response_format":{"type":"xml"}"#, "response_format"), (#""response_format":"json""#, "response_format"),
            (#""response_format":{"type":"json_schema"}"#, "response_format"),
            (#""tools":[{"type":"function","function":{"name":"two words"}}]"#, "tools[0].function.name"),
            (#""tool_choice":"auto""#, "tool_choice"),
            (#""parallel_tool_calls":false"#, "parallel_tool_calls"), (#""functions":[]"#, "functions"),
            (#""function_call":"none""#, "function_call"),
        ]
        for (field, param) in cases {
            let reply = try await post(parley, #"{"model":"openai:fake","# + messages + "," + field + "}")
            assertRefused(reply, param: param)
        }
        XCTAssertTrue(upstream.requests.filter { $0.method == "POST" }.isEmpty, "nothing was sent upstream")
        let list = try await parley.call("GET", "/api/conversations")
        XCTAssertEqual((list.json["items"] as? [Any])?.count, 0, "nothing was stored")

        // Unknown keys outside the list keep today's behaviour: ignored.
        upstream.enqueue(.openAIChat(tokens: ["ok"]))
        let reply = try await post(parley, #"{"model":"openai:fake","# + messages + #","metadata":{"k":"v"},"tools":null}"#)
        XCTAssertEqual(reply.status, 200, reply.text)
    }

    func testAnthropicMapsStopAndUserAndRefusesWhatItCannotHonour() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(["PARLEY_ANTHROPIC_BASE_URL": upstream.baseURL, "PARLEY_ANTHROPIC_API_KEY": "test-key",
                                      "PARLEY_ANTHROPIC_MODELS": "claude-fake"])
        for (field, param) in [(#""seed":1"#, "seed"), (#""presence_penalty":0.5"#, "presence_penalty"),
                               (#""frequency_penalty":0"#, "frequency_penalty"), (#""logprobs":true"#, "logprobs"),
                               (#""response_format":{"type":"json_object"}"#, "response_format"),
                               (#""stop":"x","response_format":{"type":"json_schema","json_schema":{"name":"a"}}"#,
                                "response_format")] {
            let reply = try await post(parley, #"{"model":"anthropic:claude-fake","# + messages + "," + field + "}")
            assertRefused(reply, param: param)
        }
        XCTAssertTrue(upstream.requests.filter { $0.method == "POST" }.isEmpty, "nothing was sent upstream")
        let list = try await parley.call("GET", "/api/conversations")
        XCTAssertEqual((list.json["items"] as? [Any])?.count, 0, "nothing was stored")

        upstream.enqueue(.anthropicMessages(tokens: ["ok"]))
        let reply = try await post(parley, #"{"model":"anthropic:claude-fake","# + messages
                                   + #","stop":["END"],"user":"u-1","logprobs":false,"response_format":{"type":"text"}}"#)
        XCTAssertEqual(reply.status, 200, reply.text)
        let sent = try XCTUnwrap(upstream.requests.last { $0.method == "POST" }?.jsonBody)
        XCTAssertEqual(sent["stop_sequences"] as? [String], ["END"])
        XCTAssertEqual(sent["metadata"] as? [String: String], ["user_id": "u-1"])
        XCTAssertEqual(Set(sent.keys).intersection(["stop", "user", "logprobs", "response_format"]), [])
    }

    func testTheDemoModelAcceptsOnlyUser() async throws {
        let parley = try startParley()
        for (field, param) in [(#""stop":"x""#, "stop"), (#""seed":1"#, "seed"), (#""logprobs":true"#, "logprobs"),
                               (#""logprobs":true,"top_logprobs":2"#, "logprobs"),
                               (#""response_format":{"type":"json_object"}"#, "response_format"),
                               (#""tools":[{"type":"function","function":{"name":"f"}}]"#, "tools")] {
            assertRefused(try await post(parley, #"{"model":"demo","# + messages + "," + field + "}"), param: param)
        }
        // The demo cannot read tool calls and results either.
        let toolHistory = #"{"model":"demo","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"#
            + #""tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},"#
            + #"{"role":"tool","tool_call_id":"c1","content":"ok"}]}"#
        assertRefused(try await post(parley, toolHistory), param: "messages")
        let list = try await parley.call("GET", "/api/conversations")
        XCTAssertEqual((list.json["items"] as? [Any])?.count, 0, "nothing was stored")
        let reply = try await post(parley, #"{"model":"demo","user":"someone","# + messages + "}")
        XCTAssertEqual(reply.status, 200, reply.text)
    }

    func testNoAnswerOrChunkCarriesASystemFingerprint() async throws {
        let parley = try startParley()
        let plain = try await post(parley, #"{"model":"demo","# + messages + "}")
        XCTAssertEqual(plain.status, 200, plain.text)
        XCTAssertNil(plain.json["system_fingerprint"])
        XCTAssertFalse(plain.text.contains("system_fingerprint"))
        let streamed = try await post(parley, #"{"model":"demo","stream":true,"# + messages + "}")
        XCTAssertEqual(streamed.status, 200, streamed.text)
        XCTAssertTrue(streamed.text.contains("chat.completion.chunk"))
        XCTAssertFalse(streamed.text.contains("system_fingerprint"), streamed.text)
    }
}
