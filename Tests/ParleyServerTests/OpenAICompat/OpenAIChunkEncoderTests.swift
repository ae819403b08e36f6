import Foundation
@testable import ParleyOpenAICompat
import ParleyPrimitives
import ParleyProviders
import XCTest

/// The exact bytes of OpenAI's tool-call chunks, `message.tool_calls` and the log probabilities relay
/// (`OpenAIChunkEncoder`), as OpenAI writes them.
final class OpenAIChunkEncoderTests: XCTestCase {
    private let encoder = OpenAIChunkEncoder(id: "chatcmpl-m1", created: 1_700_000_000, model: "openai:gpt", includeUsage: false)
    private let head = #"{"id":"chatcmpl-m1","object":"chat.completion.chunk","created":1700000000,"model":"openai:gpt","#

    private func frame(_ choice: String) -> String {
        "data: " + head + #""choices":[{"index":0,"# + choice + "}]}\n\n"
    }

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    func testToolCallChunksAreOpenAIs() {
        XCTAssertEqual(text(encoder.toolCallStart(index: 1, id: "call_Ab", name: "get_weather")), frame(
            #""delta":{"tool_calls":[{"index":1,"id":"call_Ab","type":"function","function":{"name":"get_weather","arguments":""}}]},"#
                + #""logprobs":null,"finish_reason":null"#))
        XCTAssertEqual(text(encoder.toolCallArguments(index: 1, fragment: #"{"city": "Mé"#)), frame(
            #""delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"city\": \"Mé"}}]},"logprobs":null,"finish_reason":null"#))
        XCTAssertEqual(text(encoder.finish("tool_calls")), frame(#""delta":{},"logprobs":null,"finish_reason":"tool_calls""#))
    }

    func testContentChunkRelaysLogprobs() throws {
        let item = try XCTUnwrap(JSON(parsing: #"{"token":"Hi","logprob":-0.5,"bytes":[72,105],"top_logprobs":[]}"#))
        XCTAssertEqual(text(encoder.content("Hi", logprobs: [item])), frame(
            #""delta":{"content":"Hi"},"logprobs":{"content":[{"bytes":[72,105],"logprob":-0.5,"token":"Hi","top_logprobs":[]}],"#
                + #""refusal":null},"finish_reason":null"#))
        XCTAssertEqual(text(encoder.content("Hi")), frame(#""delta":{"content":"Hi"},"logprobs":null,"finish_reason":null"#))
    }

    func testCompletionWithToolCallsHasNullContent() throws {
        let calls = [ChatToolCall(id: "call_1", name: "get_weather", arguments: #"{"city":"Paris"}"#),
                     ChatToolCall(id: "call_2", name: "get_time", arguments: "{")]
        let body = text(encoder.completion(content: "", reasoning: "", toolCalls: calls, finishReason: "tool_calls", usage: nil))
        XCTAssertEqual(body, #"{"id":"chatcmpl-m1","object":"chat.completion","created":1700000000,"model":"openai:gpt","#
            + #""choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"tool_calls":["#
            + #"{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},"#
            + #"{"id":"call_2","type":"function","function":{"name":"get_time","arguments":"{"}}]},"logprobs":null,"#
            + #""finish_reason":"tool_calls"}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}"#)
        let withText = try XCTUnwrap(JSON(parsing: encoder.completion(content: "Let me see.", reasoning: "", toolCalls: calls,
                                                                      finishReason: "tool_calls", usage: nil)))
        let message = withText["choices"]?.arrayValue?.first?["message"]
        XCTAssertEqual(message?["content"], .string("Let me see."))
        XCTAssertEqual(message?["tool_calls"]?.arrayValue?.count, 2)
    }

    func testCompletionWithoutToolCallsIsUnchanged() throws {
        let body = try XCTUnwrap(JSON(parsing: encoder.completion(content: "", reasoning: "", finishReason: "stop", usage: nil)))
        let choice = body["choices"]?.arrayValue?.first
        XCTAssertEqual(choice?["message"]?["content"], .string(""))
        XCTAssertNil(choice?["message"]?["tool_calls"])
        XCTAssertEqual(choice?["logprobs"], .null)
    }

    func testCompletionRelaysLogprobs() throws {
        let item = try XCTUnwrap(JSON(parsing: #"{"token":"A","logprob":-1,"bytes":null,"top_logprobs":[]}"#))
        let body = try XCTUnwrap(JSON(parsing: encoder.completion(content: "A", reasoning: "", logprobs: [item],
                                                                  finishReason: "stop", usage: nil)))
        XCTAssertEqual(body["choices"]?.arrayValue?.first?["logprobs"],
                       .object(["content": .array([item]), "refusal": .null]))
    }
}
