import Foundation
import ParleyPrimitives
import ParleyProviders
import ParleyTestSupport
import XCTest

/// What each dialect's request body holds for tools: the tool list, a two-round history of calls and
/// results, `tool_choice` and `parallel_tool_calls`, as the fake upstream received them over HTTP.
final class ToolRequestBodyTests: XCTestCase {
    private let client = sharedClient

    private let weather = ToolSpec(name: "get_weather", description: "The weather in a city.",
                                   parameters: .object(["type": .string("object"),
                                                        "properties": .object(["city": .object(["type": .string("string")])]),
                                                        "required": .array([.string("city")])]))
    private let time = ToolSpec(name: "get_time", description: "", parameters: .object(["type": .string("object")]))

    /// Two rounds: two parallel calls (one with text before it, one whose arguments are not JSON) and
    /// their results, then one call and its failed result, then the user again.
    private var history: [ChatMessage] {
        [
            ChatMessage(role: .system, content: "Use the tools."),
            ChatMessage(role: .user, content: "Weather and time in Méribel?"),
            ChatMessage(role: .assistant, content: "Let me look.", toolCalls: [
                ChatToolCall(id: "call_1", name: "get_weather", arguments: #"{"city":"Méribel"}"#),
                ChatToolCall(id: "call_2", name: "get_time", arguments: #"{"zone": "#),
            ]),
            .toolResult(id: "call_1", content: "Snow, -3 °C", isError: false),
            .toolResult(id: "call_2", content: "arguments are not JSON", isError: true),
            ChatMessage(role: .assistant, content: "", toolCalls: [
                ChatToolCall(id: "call_3", name: "get_time", arguments: #"{"zone":"CET"}"#),
            ]),
            .toolResult(id: "call_3", content: "14:05", isError: false),
            ChatMessage(role: .user, content: "Thanks! And tomorrow?"),
        ]
    }

    private func json(_ text: String) -> JSON? { JSON(parsing: text) }

    private func sentBody(_ fake: FakeUpstream) throws -> JSON {
        try XCTUnwrap(JSON(parsing: try XCTUnwrap(fake.requests.last).body))
    }

    // MARK: - OpenAI

    private func openAIBody(_ request: ChatRequest) async throws -> JSON {
        let fake = try FakeUpstream()
        fake.enqueue(.openAIChat(tokens: ["ok"]))
        _ = await collect(OpenAICompatibleProvider(baseURL: fake.baseURL, client: client).stream(request))
        return try sentBody(fake)
    }

    func testOpenAIBodyHasToolsCallsAndResults() async throws {
        let options = ChatOptions(toolChoice: .function("get_weather"), parallelToolCalls: false)
        let body = try await openAIBody(ChatRequest(model: "gpt-x", messages: history, options: options,
                                                    tools: [weather, time]))
        XCTAssertEqual(body["tools"], json(#"""
            [{"type":"function","function":{"name":"get_weather","description":"The weather in a city.",
              "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},
             {"type":"function","function":{"name":"get_time","parameters":{"type":"object"}}}]
            """#))
        XCTAssertEqual(body["tool_choice"], json(#"{"type":"function","function":{"name":"get_weather"}}"#))
        XCTAssertEqual(body["parallel_tool_calls"], .bool(false))
        XCTAssertEqual(body["messages"], json(#"""
            [{"role":"system","content":"Use the tools."},
             {"role":"user","content":"Weather and time in Méribel?"},
             {"role":"assistant","content":"Let me look.","tool_calls":[
               {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Méribel\"}"}},
               {"id":"call_2","type":"function","function":{"name":"get_time","arguments":"{\"zone\": "}}]},
             {"role":"tool","tool_call_id":"call_1","content":"Snow, -3 °C"},
             {"role":"tool","tool_call_id":"call_2","content":"arguments are not JSON"},
             {"role":"assistant","content":null,"tool_calls":[
               {"id":"call_3","type":"function","function":{"name":"get_time","arguments":"{\"zone\":\"CET\"}"}}]},
             {"role":"tool","tool_call_id":"call_3","content":"14:05"},
             {"role":"user","content":"Thanks! And tomorrow?"}]
            """#))
    }

    func testOpenAIBodyWithoutToolsHasNoToolKeys() async throws {
        let body = try await openAIBody(ChatRequest(model: "gpt-x", messages: userHello))
        for key in ["tools", "tool_choice", "parallel_tool_calls"] {
            XCTAssertNil(body[key], key)
        }
        XCTAssertEqual(body["messages"], json(#"[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello"}]"#))
    }

    func testOpenAIToolChoiceKeepsTheClientsForm() async throws {
        for (choice, expected) in [(ChatOptions.ToolChoice.auto, #""auto""#), (.none, #""none""#),
                                   (.required, #""required""#)] {
            let body = try await openAIBody(ChatRequest(model: "gpt-x", messages: userHello,
                                                        options: ChatOptions(toolChoice: choice), tools: [time]))
            XCTAssertEqual(body["tool_choice"], json(expected))
        }
    }

    // MARK: - Anthropic

    private func anthropicBody(_ request: ChatRequest) async throws -> JSON {
        let fake = try FakeUpstream()
        fake.enqueue(.anthropicMessages(tokens: ["ok"]))
        _ = await collect(AnthropicProvider(baseURL: fake.baseURL, apiKey: "k", client: client).stream(request))
        return try sentBody(fake)
    }

    func testAnthropicBodyHasToolUseBlocksAndMergedToolResults() async throws {
        let body = try await anthropicBody(ChatRequest(model: "claude-x", messages: history, tools: [weather, time]))
        XCTAssertEqual(body["system"], .string("Use the tools."))
        XCTAssertEqual(body["tools"], json(#"""
            [{"name":"get_weather","description":"The weather in a city.",
              "input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},
             {"name":"get_time","input_schema":{"type":"object"}}]
            """#))
        XCTAssertNil(body["tool_choice"])
        // Results of one round are ONE user turn, and the user's next message joins the last one.
        XCTAssertEqual(body["messages"], json(#"""
            [{"role":"user","content":"Weather and time in Méribel?"},
             {"role":"assistant","content":[{"type":"text","text":"Let me look."},
               {"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Méribel"}},
               {"type":"tool_use","id":"call_2","name":"get_time","input":{}}]},
             {"role":"user","content":[
               {"type":"tool_result","tool_use_id":"call_1","content":"Snow, -3 °C","is_error":false},
               {"type":"tool_result","tool_use_id":"call_2","content":"arguments are not JSON","is_error":true}]},
             {"role":"assistant","content":[{"type":"tool_use","id":"call_3","name":"get_time","input":{"zone":"CET"}}]},
             {"role":"user","content":[
               {"type":"tool_result","tool_use_id":"call_3","content":"14:05","is_error":false},
               {"type":"text","text":"Thanks! And tomorrow?"}]}]
            """#))
    }

    func testAnthropicArgumentsThatAreNotAnObjectAreSentAsAnEmptyInput() async throws {
        for arguments in ["[1,2]", "\"text\"", "", "{"] {
            let messages = [ChatMessage(role: .user, content: "go"),
                            ChatMessage(role: .assistant, content: "", toolCalls: [ChatToolCall(id: "t", name: "f", arguments: arguments)]),
                            .toolResult(id: "t", content: "bad arguments", isError: true)]
            let body = try await anthropicBody(ChatRequest(model: "claude-x", messages: messages, tools: [time]))
            XCTAssertEqual(body["messages"]?.arrayValue?[1]["content"]?.arrayValue?.first?["input"], .object([:]), arguments)
        }
    }

    func testAnthropicToolChoiceMapping() async throws {
        let cases: [(ChatOptions, String?)] = [
            (ChatOptions(toolChoice: .auto), #"{"type":"auto"}"#),
            (ChatOptions(toolChoice: .required), #"{"type":"any"}"#),
            (ChatOptions(toolChoice: .function("get_time")), #"{"type":"tool","name":"get_time"}"#),
            (ChatOptions(toolChoice: ChatOptions.ToolChoice.none), #"{"type":"none"}"#),
            (ChatOptions(toolChoice: .required, parallelToolCalls: false), #"{"type":"any","disable_parallel_tool_use":true}"#),
            (ChatOptions(parallelToolCalls: false), #"{"type":"auto","disable_parallel_tool_use":true}"#),
            (ChatOptions(toolChoice: ChatOptions.ToolChoice.none, parallelToolCalls: false), #"{"type":"none"}"#),
            (ChatOptions(parallelToolCalls: true), nil),
        ]
        for (options, expected) in cases {
            let body = try await anthropicBody(ChatRequest(model: "claude-x", messages: userHello, options: options,
                                                           tools: [time]))
            XCTAssertEqual(body["tool_choice"], expected.flatMap(json), "\(options)")
            XCTAssertNil(body["parallel_tool_calls"])
        }
    }

    // MARK: - Refusals

    func testWhoHonoursToolsAndTheirOptions() throws {
        let openAI = OpenAICompatibleProvider(baseURL: "http://127.0.0.1:9", client: client)
        let anthropic = AnthropicProvider(baseURL: "http://127.0.0.1:9", apiKey: "k", client: client)
        let demo = DemoProvider()
        let withTools = ChatRequest(model: "m", messages: userHello, tools: [time])
        let options = ChatOptions(toolChoice: .required, parallelToolCalls: false)
        XCTAssertNil(openAI.refusal(withTools))
        XCTAssertNil(anthropic.refusal(withTools))
        XCTAssertEqual(demo.refusal(withTools), "tools")
        XCTAssertNil(demo.refusal(ChatRequest(model: "m", messages: userHello)))
        XCTAssertNil(openAI.refusal(options))
        XCTAssertNil(anthropic.refusal(options))
        XCTAssertEqual(demo.refusal(options), "tool_choice")
        XCTAssertEqual(demo.refusal(ChatOptions(parallelToolCalls: true)), "parallel_tool_calls")
        // Anthropic's Messages API has no JSON response format: refused, never ignored.
        let schema = ChatOptions.ResponseFormat(kind: .jsonSchema, json: #"{"type":"json_schema"}"#)
        XCTAssertEqual(anthropic.refusal(ChatOptions(responseFormat: schema, toolChoice: .auto)), "response_format")
        XCTAssertNil(openAI.refusal(ChatOptions(responseFormat: schema)))
    }
}
