import Foundation
import ParleyPrimitives
import ParleySSE
@testable import ParleyProviders
import ParleyTestSupport
import XCTest

/// Tool calls as each dialect streams them, parsed into the same `ProviderEvent`s whatever the cuts:
/// the pure parser over every two-piece cut of the body (inside `é` and `😀` too), and the providers
/// over real HTTP with one write per byte.
final class ToolCallStreamTests: XCTestCase {
    private let client = sharedClient

    private func parse(_ pieces: [ArraySlice<UInt8>], _ parser: some EventStreamParser) throws -> [ProviderEvent] {
        var decoder = SSEDecoder()
        var parser = parser
        var events: [ProviderEvent] = []
        for piece in pieces {
            for event in try decoder.decode(piece) {
                events += try parser.consume(event)
            }
        }
        return events + (try parser.finish())
    }

    /// Every offset of `bytes`, including each one inside a multi-byte character, gives `expected`.
    private func assertEveryCut(_ bytes: [UInt8], _ parser: some EventStreamParser, give expected: [ProviderEvent],
                                file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertTrue(bytes.contains { $0 >= 0xF0 } && bytes.contains { $0 == 0xC3 }, "the body holds 😀 and é",
                      file: file, line: line)
        for cut in 0...bytes.count {
            XCTAssertEqual(try parse([bytes[..<cut], bytes[cut...]], parser), expected, "cut at \(cut)", file: file, line: line)
        }
    }

    // MARK: - OpenAI

    private var openAIEvents: [ProviderEvent] {
        let logprob = JSON(parsing: #"{"token":"Sure","logprob":-0.25,"bytes":[83,117,114,101],"#
                           + #""top_logprobs":[{"token":"Sure","logprob":-0.25,"bytes":[83,117,114,101]}]}"#)
        return [
            .text("Sure"), .logprobs([logprob ?? .null]),
            .toolCall(ToolCallDelta(index: 0, id: "call_A", name: "get_weather")),
            .toolCall(ToolCallDelta(index: 1, id: "call_B", name: "get_time")),
            .toolCall(ToolCallDelta(index: 0, argumentsDelta: #"{"city": "Mé"#)),
            .toolCall(ToolCallDelta(index: 1, argumentsDelta: #"{"zone": "😀"#)),
            .toolCall(ToolCallDelta(index: 0, argumentsDelta: #"ribel \u00e9"}"#)),
            .toolCall(ToolCallDelta(index: 1, argumentsDelta: #" UTC"}"#)),
            .usage(Usage(inputTokens: 20, outputTokens: 9)), .finish(.toolCalls),
        ]
    }

    func testOpenAIParallelCallsAreTheSameEventsAtEveryCut() throws {
        let bytes = try Fixture.bytes("openai_parallel_tools.sse")
        try assertEveryCut(bytes, OpenAIStreamParser(), give: openAIEvents)
    }

    func testOpenAIParallelCallsOverHTTPOneBytePerWrite() async throws {
        let body = try Fixture.bytes("openai_parallel_tools.sse")
        let fake = try FakeUpstream()
        let provider = OpenAICompatibleProvider(baseURL: fake.baseURL, client: client)
        for cuts in [Array(1..<body.count), Array(stride(from: 3, to: body.count, by: 7)), []] {
            fake.enqueue(.eventStream(body, cuts: cuts))
            let outcome = await collect(provider.stream(ChatRequest(model: "gpt-x", messages: userHello)))
            XCTAssertNil(outcome.error)
            XCTAssertEqual(outcome.events, openAIEvents)
            XCTAssertEqual(outcome.toolCalls[0]?.arguments, #"{"city": "Méribel \u00e9"}"#)
            XCTAssertEqual(JSON(parsing: outcome.toolCalls[0]?.arguments ?? "")?["city"], .string("Méribel é"))
            XCTAssertEqual(outcome.toolCalls[1]?.arguments, #"{"zone": "😀 UTC"}"#)
        }
    }

    func testOpenAICaptureRepeatingIdAndNameGivesThemOnceAtEveryCutOverHTTP() async throws {
        let body = try Fixture.bytes("tool_stream.sse")
        let fake = try FakeUpstream()
        fake.enqueue(.eventStream(body, cuts: Array(1..<body.count)))
        let outcome = await collect(OpenAICompatibleProvider(baseURL: fake.baseURL, client: client)
            .stream(ChatRequest(model: "smollm2", messages: userHello)))
        let deltas = outcome.events.compactMap { if case .toolCall(let delta) = $0 { delta } else { nil } }
        XCTAssertEqual(deltas.compactMap(\.name), ["get_weather"])
        XCTAssertEqual(deltas.compactMap(\.id).count, 1)
        XCTAssertEqual(outcome.toolCalls[0]?.arguments, Fixture.toolArguments)
        XCTAssertEqual(outcome.finish, .toolCalls)
    }

    func testOpenAILogprobsNullOrEmptyGiveNoEvent() throws {
        var parser = OpenAIStreamParser()
        for logprobs in ["null", #"{"content":null,"refusal":null}"#, #"{"content":[]}"#, #""bad""#] {
            let data = #"{"choices":[{"index":0,"delta":{"content":"a"},"logprobs":"# + logprobs + "}]}"
            XCTAssertEqual(try parser.consume(SSEEvent(type: "message", data: data)), [.text("a")], logprobs)
        }
    }

    // MARK: - Anthropic

    private let anthropicEvents: [ProviderEvent] = [
        .text("Je vérifie 😀"),
        .toolCall(ToolCallDelta(index: 1, id: "toolu_A", name: "get_weather")),
        .toolCall(ToolCallDelta(index: 1, argumentsDelta: #"{"city": "Mé"#)),
        .toolCall(ToolCallDelta(index: 1, argumentsDelta: #"ribel 😀"}"#)),
        .toolCall(ToolCallDelta(index: 2, id: "toolu_B", name: "get_time")),
        .toolCall(ToolCallDelta(index: 2, argumentsDelta: #"{"zone": "é"}"#)),
        .usage(Usage(inputTokens: 40, outputTokens: 57)), .finish(.toolCalls),
    ]

    func testAnthropicToolUseIsTheSameEventsAtEveryCut() throws {
        let bytes = try Fixture.bytes("anthropic_tool_use.sse")
        try assertEveryCut(bytes, AnthropicStreamParser(), give: anthropicEvents)
    }

    func testAnthropicToolUseOverHTTPOneBytePerWrite() async throws {
        let body = try Fixture.bytes("anthropic_tool_use.sse")
        let fake = try FakeUpstream()
        let provider = AnthropicProvider(baseURL: fake.baseURL, apiKey: "k", models: ["claude-x"], client: client)
        for cuts in [Array(1..<body.count), Array(stride(from: 5, to: body.count, by: 11))] {
            fake.enqueue(.eventStream(body, cuts: cuts))
            let outcome = await collect(provider.stream(ChatRequest(model: "claude-x", messages: userHello)))
            XCTAssertNil(outcome.error)
            XCTAssertEqual(outcome.events, anthropicEvents)
            XCTAssertEqual(JSON(parsing: outcome.toolCalls[1]?.arguments ?? ""), .object(["city": .string("Méribel 😀")]))
            XCTAssertEqual(outcome.toolCalls[2]?.arguments, #"{"zone": "é"}"#)
        }
    }
}
