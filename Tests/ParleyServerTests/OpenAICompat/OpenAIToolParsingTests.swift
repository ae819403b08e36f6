import Foundation
@testable import ParleyAPI
@testable import ParleyOpenAICompat
import ParleyPrimitives
import ParleyProviders
import XCTest

/// `/v1/chat/completions`' tool-calling input read into typed values (`OpenAIChatRequest`,
/// `OpenAIChatTools`): tools, `tool_choice`, `parallel_tool_calls`, assistant `tool_calls` and `tool`
/// messages; each bad value a 400 whose `param` names it as OpenAI does.
final class OpenAIToolParsingTests: XCTestCase {
    private let weather = #"{"type":"function","function":{"name":"get_weather","description":"Weather.","#
        + #""parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}"#
    private let user = #"{"role":"user","content":"hi"}"#

    private func parse(_ json: String) throws(OpenAIError) -> OpenAIChatRequest {
        try OpenAIChatRequest(body: Array(json.utf8), fields: SettingsFields(maxTokensLimit: 1000))
    }

    private func body(messages: [String]? = nil, _ extra: String = "") -> String {
        #"{"model":"openai:fake","messages":["# + (messages ?? [user]).joined(separator: ",") + "]"
            + (extra.isEmpty ? "" : "," + extra) + "}"
    }

    private func assertInvalid(_ json: String, param: String, file: StaticString = #filePath, line: UInt = #line) {
        do {
            _ = try parse(json)
            XCTFail("accepted: \(json)", file: file, line: line)
        } catch {
            XCTAssertEqual(error.status, 400, file: file, line: line)
            XCTAssertEqual(error.param, param, "\(json): \(error.message)", file: file, line: line)
            XCTAssertEqual(error.kind, .invalidRequest, file: file, line: line)
        }
    }

    // MARK: - tools, tool_choice, parallel_tool_calls

    func testToolsAreParsedIntoToolSpecs() throws {
        let chat = try parse(body(#""tools":["# + weather + #",{"type":"function","function":{"name":"now-2"}}],"#
                                  + #""tool_choice":{"type":"function","function":{"name":"now-2"}},"parallel_tool_calls":false"#))
        XCTAssertEqual(chat.tools, [
            ToolSpec(name: "get_weather", description: "Weather.",
                     parameters: .object(["type": .string("object"),
                                          "properties": .object(["city": .object(["type": .string("string")])])])),
            ToolSpec(name: "now-2", description: "", parameters: OpenAIChatTools.noParameters),
        ])
        XCTAssertEqual(chat.options.toolChoice, .function("now-2"))
        XCTAssertEqual(chat.options.parallelToolCalls, false)
        XCTAssertFalse(chat.hasToolTurns)
    }

    func testToolChoiceStrings() throws {
        for (text, choice) in [("auto", ChatOptions.ToolChoice.auto), ("none", .none), ("required", .required)] {
            let chat = try parse(body(#""tools":["# + weather + #"],"tool_choice":""# + text + #"""#))
            XCTAssertEqual(chat.options.toolChoice, choice)
            XCTAssertEqual(chat.options.toolChoice?.openAIJSON, .string(text))
        }
        let none = try parse(body(#""tools":null,"tool_choice":null,"parallel_tool_calls":null"#))
        XCTAssertEqual(none.tools, [])
        XCTAssertFalse(none.hasToolTurns)
    }

    func testBadToolsAreRefusedNamingTheParameter() {
        let tooMany = Array(repeating: 0, count: OpenAIChatTools.maxTools + 1).enumerated().map { index, _ in
            #"{"type":"function","function":{"name":"f\#(index)"}}"#
        }.joined(separator: ",")
        let cases: [(String, String)] = [
            (#""tools":{}"#, "tools"),
            (#""tools":["# + tooMany + "]", "tools"),
            (#""tools":[{"type":"custom","custom":{"name":"f"}}]"#, "tools[0].type"),
            (#""tools":["# + weather + #",{"type":"function"}]"#, "tools[1].function"),
            (#""tools":[{"type":"function","function":{"name":"a b"}}]"#, "tools[0].function.name"),
            (#""tools":[{"type":"function","function":{"name":""}}]"#, "tools[0].function.name"),
            (#""tools":[{"type":"function","function":{"name":"é"}}]"#, "tools[0].function.name"),
            (#""tools":[{"type":"function","function":{"name":""# + String(repeating: "n", count: 65) + #""}}]"#,
             "tools[0].function.name"),
            (#""tools":["# + weather + "," + weather + "]", "tools[1].function.name"),
            (#""tools":[{"type":"function","function":{"name":"f","description":7}}]"#, "tools[0].function.description"),
            (#""tools":[{"type":"function","function":{"name":"f","parameters":[]}}]"#, "tools[0].function.parameters"),
            (#""tool_choice":"auto""#, "tool_choice"),
            (#""tools":["# + weather + #"],"tool_choice":"always""#, "tool_choice"),
            (#""tools":["# + weather + #"],"tool_choice":{"type":"function","function":{"name":"other"}}"#, "tool_choice"),
            (#""tools":["# + weather + #"],"tool_choice":{"type":"function"}"#, "tool_choice"),
            (#""parallel_tool_calls":"yes""#, "parallel_tool_calls"),
            (#""parallel_tool_calls":false"#, "parallel_tool_calls"),
            (#""functions":[]"#, "functions"),
        ]
        for (extra, param) in cases {
            assertInvalid(body(extra), param: param)
        }
        let longest = String(repeating: "n", count: OpenAIChatTools.maxNameLength)
        XCTAssertTrue(OpenAIChatTools.isValidName(longest) && OpenAIChatTools.isValidName("A_z-09"))
    }

    // MARK: - Messages with tool calls and results

    private let twoRounds = [
        #"{"role":"system","content":"Use tools."}"#,
        #"{"role":"user","content":"Weather?"}"#,
        #"{"role":"assistant","content":"Looking.","tool_calls":[{"id":"call_1","type":"function","#
            + #""function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},{"id":"call_2","type":"function","#
            + #""function":{"name":"get_weather","arguments":"{not json"}}]}"#,
        #"{"role":"tool","tool_call_id":"call_2","content":"bad arguments"}"#,
        #"{"role":"tool","tool_call_id":"call_1","content":[{"type":"text","text":"Sun"},{"type":"text","text":", 20 °C"}]}"#,
        #"{"role":"assistant","content":"Sunny."}"#,
        #"{"role":"user","content":"And Lyon?"}"#,
        #"{"role":"assistant","content":null,"tool_calls":[{"id":"call_3","type":"function","#
            + #""function":{"name":"get_weather","arguments":"{}"}}]}"#,
        #"{"role":"tool","tool_call_id":"call_3","content":"Rain"}"#,
    ]

    func testAHistoryOfCallsAndResultsIsParsedIntoTurns() throws {
        let chat = try parse(body(messages: twoRounds + [#"{"role":"user","content":"Thanks"}"#]))
        XCTAssertEqual(chat.systemPrompt, "Use tools.")
        XCTAssertEqual(chat.content, "Thanks")
        XCTAssertFalse(chat.continuesAfterToolResults)
        XCTAssertEqual(chat.history, [
            .init(role: .user, content: "Weather?"),
            .init(role: .assistant, content: "Looking.",
                  toolCalls: [ChatToolCall(id: "call_1", name: "get_weather", arguments: #"{"city":"Paris"}"#),
                              ChatToolCall(id: "call_2", name: "get_weather", arguments: "{not json")],
                  toolResults: [.init(toolCallID: "call_2", content: "bad arguments"),
                                .init(toolCallID: "call_1", content: "Sun, 20 °C")]),
            .init(role: .assistant, content: "Sunny."),
            .init(role: .user, content: "And Lyon?"),
            .init(role: .assistant, content: "", toolCalls: [ChatToolCall(id: "call_3", name: "get_weather", arguments: "{}")],
                  toolResults: [.init(toolCallID: "call_3", content: "Rain")]),
        ])
        XCTAssertTrue(chat.hasToolTurns)
    }

    func testARequestMayEndWithToolResults() throws {
        let chat = try parse(body(messages: twoRounds))
        XCTAssertTrue(chat.continuesAfterToolResults)
        XCTAssertEqual(chat.content, "")
        XCTAssertEqual(chat.history.count, 5)
        XCTAssertEqual(chat.history.last?.toolResults.map(\.content), ["Rain"])
        XCTAssertTrue(chat.hasToolTurns)
    }

    func testBadToolMessagesAreRefused() {
        let call = #"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","#
            + #""function":{"name":"f","arguments":"{}"}}]}"#
        let result = #"{"role":"tool","tool_call_id":"c1","content":"ok"}"#
        let cases: [[String]] = [
            [user, call, user],  // a call without its result
            [user, call, result, result],  // answered twice
            [user, call, #"{"role":"tool","tool_call_id":"c9","content":"ok"}"#],  // not a call of that turn
            [user, result],  // no call before it
            [user, call, #"{"role":"tool","content":"ok"}"#],  // no tool_call_id
            [user, #"{"role":"assistant","content":null}"#, user],  // null content without calls
            [user, #"{"role":"assistant","content":"x","tool_calls":[{"id":"c1","type":"function"}]}"#, user],
            [user, #"{"role":"assistant","content":"x","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},"#
                + #"{"id":"c1","type":"function","function":{"name":"g","arguments":"{}"}}]}"#, user],  // ids not distinct
            [user, #"{"role":"assistant","content":"x","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":{}}}]}"#,
             user],  // arguments not a string
            [user, call, result, #"{"role":"user","content":""}"#],
        ]
        for messages in cases {
            assertInvalid(body(messages: messages), param: "messages")
        }
    }

    func testPlainRequestsAreParsedAsBefore() throws {
        let chat = try parse(body(messages: [user, #"{"role":"assistant","content":"a"}"#,
                                             #"{"role":"assistant","content":"b"}"#, user, user]))
        XCTAssertEqual(chat.history, [.init(role: .user, content: "hi"), .init(role: .assistant, content: "a\n\nb")])
        XCTAssertEqual(chat.content, "hi\n\nhi")
        XCTAssertFalse(chat.hasToolTurns)
    }
}
