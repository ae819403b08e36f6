import Foundation
import ParleySSE
import ParleyStore
import ParleyTestSupport
import XCTest

/// Client tools through `POST /v1/chat/completions`: the model's calls relayed in OpenAI's shapes
/// (streamed and not, parallel, arguments in fragments cut anywhere in the upstream's bytes), never run
/// by Parley; the client's calls and results stored as the reply's parts and sent upstream; a request
/// ending with results answered by the model's next round of the same reply.
final class OpenAIToolCallTests: XCTestCase {
    private let weather = ["type": "function",
                           "function": ["name": "get_weather", "description": "Weather in a city.",
                                        "parameters": ["type": "object", "properties": ["city": ["type": "string"]]]]]
                          as [String: Any]

    /// An OpenAI stream: "Let me check." then two parallel calls, their arguments in fragments; one
    /// fragment ends inside the "ü" of Zürich's JSON text, and the body is also cut inside it.
    private static let twoCalls: FakeUpstream.Script = {
        func chunk(_ delta: String, finish: String? = nil) -> String {
            let reason = finish.map { "\"\($0)\"" } ?? "null"
            return "data: {\"id\":\"chatcmpl-up\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
                + "\"delta\":\(delta),\"finish_reason\":\(reason)}]}\n\n"
        }
        func call(_ index: Int, id: String? = nil, name: String? = nil, _ fragment: String) -> String {
            let head = id.map { "\"id\":\"\($0)\",\"type\":\"function\"," } ?? ""
            let nameField = name.map { "\"name\":\"\($0)\"," } ?? ""
            return chunk("{\"tool_calls\":[{\"index\":\(index),\(head)\"function\":{\(nameField)\"arguments\":\(fragment)}}]}")
        }
        let body = chunk("{\"role\":\"assistant\",\"content\":\"\"}") + chunk("{\"content\":\"Let me check.\"}")
            + call(0, id: "call_up_1", name: "get_weather", #""""#) + call(0, #""{\"city\":\"Z""#)
            + call(0, #""ürich\"}""#)
            + call(1, id: "call_up_2", name: "get_weather", #""{\"ci""#) + call(1, #""ty\":\"Oslo\"}""#)
            + chunk("{}", finish: "tool_calls") + "data: [DONE]\n\n"
        let bytes = Array(body.utf8)
        // A cut between the two bytes of "ü".
        let u = Array("ü".utf8)
        let at = (0..<bytes.count - 1).first { bytes[$0] == u[0] && bytes[$0 + 1] == u[1] }! + 1
        return .eventStream(bytes, cuts: [at, at + 40])
    }()

    private func completion(_ parley: TestParley, _ body: [String: Any], headers: [(String, String)] = [])
        async throws -> TestParley.Reply {
        try await parley.call("POST", "/v1/chat/completions", json: body, headers: headers)
    }

    private func objects(_ text: String) throws -> [[String: Any]] {
        var decoder = SSEDecoder()
        let data = try decoder.decode(Array(text.utf8)).map(\.data)
        XCTAssertEqual(data.last, "[DONE]", text)
        return data.dropLast().compactMap { ExactJSON.parse($0)?.foundation as? [String: Any] }
    }

    private func delta(_ chunk: [String: Any]) -> [String: Any] {
        ((chunk["choices"] as? [[String: Any]])?.first?["delta"] as? [String: Any]) ?? [:]
    }

    func testStreamedCallsAreRelayedInOpenAIsChunkFormatAndNotRun() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(Self.twoCalls)
        let parley = try startParley(upstream: upstream)
        let reply = try await completion(parley, [
            "model": "openai:fake", "stream": true, "tools": [weather], "tool_choice": "auto",
            "parallel_tool_calls": true, "messages": [["role": "user", "content": "Weather in Zürich and Oslo?"]],
        ])
        XCTAssertEqual(reply.status, 200, reply.text)
        let chunks = try objects(reply.text)
        var content = ""
        var calls: [Int: (id: String, name: String, arguments: String)] = [:]
        for chunk in chunks.dropLast() {
            let delta = delta(chunk)
            content += delta["content"] as? String ?? ""
            for call in delta["tool_calls"] as? [[String: Any]] ?? [] {
                let index = try XCTUnwrap(call["index"] as? Int)
                let function = try XCTUnwrap(call["function"] as? [String: Any])
                if let id = call["id"] as? String {
                    XCTAssertNil(calls[index], "a call is announced once")
                    XCTAssertEqual(call["type"] as? String, "function")
                    XCTAssertEqual(function["arguments"] as? String, "")
                    calls[index] = (id, function["name"] as? String ?? "", "")
                } else {
                    XCTAssertEqual(Set(call.keys), ["index", "function"], "later chunks carry only the fragment")
                    calls[index]?.arguments += function["arguments"] as? String ?? ""
                }
            }
        }
        XCTAssertEqual(content, "Let me check.")
        XCTAssertEqual(calls[0]?.id, "call_up_1")
        XCTAssertEqual(calls[1]?.id, "call_up_2")
        XCTAssertEqual(calls[0]?.name, "get_weather")
        XCTAssertEqual(calls[0]?.arguments, #"{"city":"Zürich"}"#)
        XCTAssertEqual(calls[1]?.arguments, #"{"city":"Oslo"}"#)
        let last = try XCTUnwrap(chunks.last)
        XCTAssertEqual((last["choices"] as? [[String: Any]])?.first?["finish_reason"] as? String, "tool_calls")

        let sent = try XCTUnwrap(upstream.requests.last?.jsonBody)
        XCTAssertEqual((sent["tools"] as? [[String: Any]])?.count, 1)
        XCTAssertEqual(sent["tool_choice"] as? String, "auto")
        XCTAssertEqual(sent["parallel_tool_calls"] as? Bool, true)
        XCTAssertEqual(upstream.requests.filter { $0.method == "POST" }.count, 1, "Parley ran nothing, asked nothing more")
        let messageID = try XCTUnwrap(reply.headers["x-parley-message"])
        let stored = try await parley.call("GET", "/api/messages/\(messageID)")
        XCTAssertEqual(stored.json["status"] as? String, "complete")
        XCTAssertEqual(stored.json["finish_reason"] as? String, "tool_calls")
    }

    func testANonStreamingCallAnswersWithMessageToolCalls() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(Self.twoCalls)
        let parley = try startParley(upstream: upstream)
        let reply = try await completion(parley, [
            "model": "openai:fake", "tools": [weather], "messages": [["role": "user", "content": "Weather?"]],
        ])
        XCTAssertEqual(reply.status, 200, reply.text)
        let choice = try XCTUnwrap((reply.json["choices"] as? [[String: Any]])?.first)
        XCTAssertEqual(choice["finish_reason"] as? String, "tool_calls")
        let message = try XCTUnwrap(choice["message"] as? [String: Any])
        XCTAssertEqual(message["content"] as? String, "Let me check.")
        let calls = try XCTUnwrap(message["tool_calls"] as? [[String: Any]])
        XCTAssertEqual(calls.map { $0["id"] as? String }, ["call_up_1", "call_up_2"])
        XCTAssertEqual(calls.map { ($0["function"] as? [String: Any])?["arguments"] as? String },
                       [#"{"city":"Zürich"}"#, #"{"city":"Oslo"}"#])
        XCTAssertEqual(calls.map { ($0["function"] as? [String: Any])?["name"] as? String }, ["get_weather", "get_weather"])
    }

    /// The client ran the calls: its history (calls and results) is stored as one reply's parts, sent
    /// upstream as tool turns, and the model's answer is that reply's next round.
    func testARequestEndingWithToolResultsIsAnsweredByTheModel() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(.openAIChat(tokens: ["Sunny in Zürich, ", "rain in Oslo."]))
        let parley = try startParley(upstream: upstream)
        for stream in [true, false] {
            if !stream { upstream.enqueue(.openAIChat(tokens: ["Sunny in Zürich, ", "rain in Oslo."])) }
            let reply = try await completion(parley, [
                "model": "openai:fake", "stream": stream, "tools": [weather],
                "messages": [
                    ["role": "user", "content": "Weather?"],
                    ["role": "assistant", "content": "Let me check.", "tool_calls": [
                        ["id": "c1", "type": "function", "function": ["name": "get_weather", "arguments": #"{"city":"Zürich"}"#]],
                        ["id": "c2", "type": "function", "function": ["name": "get_weather", "arguments": "{not json"]],
                    ]],
                    ["role": "tool", "tool_call_id": "c2", "content": "Rain"],
                    ["role": "tool", "tool_call_id": "c1", "content": "Sun"],
                ],
            ])
            XCTAssertEqual(reply.status, 200, reply.text)
            if stream {
                let chunks = try objects(reply.text)
                XCTAssertEqual(chunks.map { delta($0)["content"] as? String ?? "" }.joined(),
                               "Sunny in Zürich, rain in Oslo.", "only the new round: nothing of the stored turn again")
                XCTAssertFalse(reply.text.contains("tool_calls\":["), reply.text)
            } else {
                let message = try XCTUnwrap((reply.json["choices"] as? [[String: Any]])?.first?["message"] as? [String: Any])
                XCTAssertEqual(message["content"] as? String, "Sunny in Zürich, rain in Oslo.")
                XCTAssertNil(message["tool_calls"])
            }
            let sent = try XCTUnwrap(upstream.requests.last?.jsonBody)
            let turns = try XCTUnwrap(sent["messages"] as? [[String: Any]])
            XCTAssertEqual(turns.map { $0["role"] as? String }, ["user", "assistant", "tool", "tool"])
            let calls = try XCTUnwrap(turns[1]["tool_calls"] as? [[String: Any]])
            XCTAssertEqual(calls.map { ($0["function"] as? [String: Any])?["arguments"] as? String },
                           [#"{"city":"Zürich"}"#, "{not json"])
            XCTAssertEqual(turns[2]["tool_call_id"] as? String, calls[0]["id"] as? String, "each result paired with its call")
            XCTAssertEqual(turns[2]["content"] as? String, "Sun")
            XCTAssertEqual(turns[3]["content"] as? String, "Rain")

            let conversation = try XCTUnwrap(reply.headers["x-parley-conversation"])
            let shown = try await parley.call("GET", "/api/conversations/\(conversation)")
            let messages = try XCTUnwrap(shown.json["messages"] as? [[String: Any]])
            XCTAssertEqual(messages.map { $0["role"] as? String }, ["user", "assistant"], "one reply across its rounds")
            XCTAssertEqual(messages[1]["id"] as? String, reply.headers["x-parley-message"])
            // The parts are read from the database (the page's API does not show them yet).
            let store = try Store(path: parley.directory.appendingPathComponent("parley.db").path)
            let parts = try XCTUnwrap(store.message(id: reply.headers["x-parley-message"] ?? "")).parts
            XCTAssertEqual(parts.count, 4)
            XCTAssertEqual(parts.first, .text("Let me check.", html: "<p>Let me check.</p>\n"))
            XCTAssertEqual(parts.compactMap(\.toolCall), [
                ToolCallPart(id: "call_1", providerID: "c1", tool: "get_weather", name: "get_weather",
                             argumentsText: #"{"city":"Zürich"}"#, arguments: .object(["city": .string("Zürich")]),
                             status: .complete, result: .text("Sun", isError: false)),
                ToolCallPart(id: "call_2", providerID: "c2", tool: "get_weather", name: "get_weather",
                             argumentsText: "{not json", status: .complete, result: .text("Rain", isError: false)),
            ], "arguments that are not JSON are kept as text only")
            XCTAssertEqual(parts.last?.answerText, "Sunny in Zürich, rain in Oslo.")
        }
    }

    /// With the conversation header, the results answer the calls of the stored reply (the current leaf).
    func testResultsForTheConversationsLastReplyContinueIt() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(Self.twoCalls, .openAIChat(tokens: ["Both fine."]))
        let parley = try startParley(upstream: upstream)
        let asked = [["role": "user", "content": "Weather?"]]
        let first = try await completion(parley, ["model": "openai:fake", "tools": [weather], "messages": asked])
        XCTAssertEqual(first.status, 200, first.text)
        let conversation = try XCTUnwrap(first.headers["x-parley-conversation"])
        let header = ("X-Parley-Conversation", conversation)
        let message = try XCTUnwrap((first.json["choices"] as? [[String: Any]])?.first?["message"] as? [String: Any])
        func answering(_ ids: [String]) -> [String: Any] {
            ["model": "openai:fake", "tools": [weather],
             "messages": asked + [message.filter { $0.value is NSNull == false } as [String: Any]]
                + ids.map { ["role": "tool", "tool_call_id": $0, "content": "fine"] }]
        }
        let elsewhere: [String: Any] = ["role": "assistant", "content": NSNull(), "tool_calls": [
            ["id": "elsewhere", "type": "function", "function": ["name": "get_weather", "arguments": "{}"]]]]
        let unknown = try await completion(parley, [
            "model": "openai:fake", "tools": [weather],
            "messages": asked + [elsewhere, ["role": "tool", "tool_call_id": "elsewhere", "content": "x"]],
        ], headers: [header])
        XCTAssertEqual(unknown.status, 400, unknown.text)
        XCTAssertEqual((unknown.json["error"] as? [String: Any])?["param"] as? String, "messages")

        let second = try await completion(parley, answering(["call_up_1", "call_up_2"]), headers: [header])
        XCTAssertEqual(second.status, 200, second.text)
        XCTAssertEqual(second.headers["x-parley-message"], first.headers["x-parley-message"], "the same reply goes on")
        let answer = try XCTUnwrap((second.json["choices"] as? [[String: Any]])?.first?["message"] as? [String: Any])
        XCTAssertEqual(answer["content"] as? String, "Both fine.")
        let turns = try XCTUnwrap(upstream.requests.last?.jsonBody?["messages"] as? [[String: Any]])
        XCTAssertEqual(turns.map { $0["role"] as? String }, ["user", "assistant", "tool", "tool"])
        XCTAssertEqual(turns.dropFirst(2).map { $0["content"] as? String }, ["fine", "fine"])
    }

    func testAForeignConversationIsNotFoundAndBadToolsAreNamed() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(.openAIChat(tokens: ["hi"]))
        let parley = try startTeamParley(upstream: upstream)
        let alice = try Team.bearer(parley, "alice"), bob = try Team.bearer(parley, "bob")
        let user = [["role": "user", "content": "x"]]
        let first = try await completion(parley, ["model": "openai:fake", "messages": user], headers: [alice])
        let conversation = try XCTUnwrap(first.headers["x-parley-conversation"])
        let foreign = try await completion(parley, ["model": "openai:fake", "tools": [weather], "messages": user],
                                           headers: [bob, ("X-Parley-Conversation", conversation)])
        XCTAssertEqual(foreign.status, 404, foreign.text)
        XCTAssertEqual((foreign.json["error"] as? [String: Any])?["code"] as? String, "conversation_not_found")

        let bad: [([String: Any], String)] = [
            (["tools": [["type": "function", "function": ["name": "a b"]]]], "tools[0].function.name"),
            (["tools": "get_weather"], "tools"),
            (["tools": [weather], "tool_choice": ["type": "function", "function": ["name": "other"]]], "tool_choice"),
            (["parallel_tool_calls": false], "parallel_tool_calls"),
        ]
        for (extra, param) in bad {
            let reply = try await completion(parley, ["model": "openai:fake", "messages": user].merging(extra) { $1 },
                                             headers: [alice])
            XCTAssertEqual(reply.status, 400, reply.text)
            XCTAssertEqual((reply.json["error"] as? [String: Any])?["param"] as? String, param, reply.text)
        }
        XCTAssertEqual(upstream.requests.filter { $0.method == "POST" }.count, 1, "nothing more was sent upstream")
    }
}
