import Foundation
import ParleyProviders
import ParleyTestSupport
import ParleyUpstream
import XCTest

final class AnthropicProviderTests: XCTestCase {
    private let client = sharedClient
    private let apiKey = "sk-ant-SECRET-abcdef"

    private func provider(_ fake: FakeUpstream, maxTokens: Int = AnthropicProvider.defaultMaxTokens) -> AnthropicProvider {
        AnthropicProvider(baseURL: fake.baseURL, apiKey: apiKey, models: ["claude-x"], maxTokens: maxTokens, client: client,
                          retry: RetryPolicy(backoff: .milliseconds(10)))
    }

    private func event(_ type: String, _ json: String) -> String { "event: \(type)\ndata: \(json)\n\n" }

    private var richStream: [String] {
        [
            event("message_start", #"{"type":"message_start","message":{"id":"m","usage":{"input_tokens":12,"output_tokens":1}}}"#),
            event("ping", #"{"type": "ping"}"#),
            event("content_block_start", #"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#),
            event("content_block_delta", #"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think."}}"#),
            event("content_block_delta", #"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"xyz"}}"#),
            event("content_block_stop", #"{"type":"content_block_stop","index":0}"#),
            event("future_event", #"{"type":"future_event","what":1}"#),
            event("content_block_start", #"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#),
            event("content_block_delta", #"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Bonjour "}}"#),
            event("ping", #"{"type": "ping"}"#),
            event("content_block_delta", #"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"😀"}}"#),
            event("content_block_stop", #"{"type":"content_block_stop","index":1}"#),
            event("content_block_start", #"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}"#),
            event("content_block_delta", #"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}}"#),
            event("content_block_delta", #"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":" \"Paris\"}"}}"#),
            event("content_block_stop", #"{"type":"content_block_stop","index":2}"#),
            event("message_delta", #"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}}"#),
            event("message_stop", #"{"type":"message_stop"}"#),
        ]
    }

    func testStreamWithPingsThinkingToolUseAndUnknownEvents() async throws {
        let fake = try FakeUpstream()
        let body = Array(richStream.joined().utf8)
        for cuts in [[], Array(stride(from: 1, to: body.count, by: 1)), Array(stride(from: 11, to: body.count, by: 11))] {
            fake.enqueue(.eventStream(body, cuts: cuts))
            let outcome = await collect(provider(fake).stream(ChatRequest(model: "claude-x", messages: userHello)))
            XCTAssertNil(outcome.error)
            XCTAssertEqual(outcome.reasoning, "Let me think.")
            XCTAssertEqual(outcome.text, "Bonjour 😀")
            XCTAssertEqual(outcome.toolCalls[2]?.id, "toolu_1")
            XCTAssertEqual(outcome.toolCalls[2]?.name, "get_weather")
            XCTAssertEqual(outcome.toolCalls[2]?.arguments, "{\"city\": \"Paris\"}")
            XCTAssertEqual(Array(outcome.events.suffix(2)), [.usage(Usage(inputTokens: 12, outputTokens: 30)), .finish(.toolCalls)])
        }
    }

    func testSendsMessagesRequestWithSystemFieldAndHeaders() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.anthropicMessages(tokens: ["Hi"]))
        let outcome = await collect(provider(fake, maxTokens: 123).stream(ChatRequest(model: "claude-x", messages: userHello)))
        XCTAssertEqual(outcome.text, "Hi")
        XCTAssertEqual(outcome.finish, .stop)
        let request = try XCTUnwrap(fake.requests.first)
        XCTAssertEqual(request.path, "/v1/messages")
        XCTAssertEqual(request.header("x-api-key"), apiKey)
        XCTAssertEqual(request.header("anthropic-version"), "2023-06-01")
        let json = try XCTUnwrap(request.jsonBody)
        XCTAssertEqual(json["system"] as? String, "Be brief.")
        XCTAssertEqual(json["max_tokens"] as? Int, 123)
        XCTAssertEqual(json["stream"] as? Bool, true)
        XCTAssertEqual(json["messages"] as? [[String: String]], [["role": "user", "content": "Hello"]])
    }

    func testMaxTokensDefaultsTo4096() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.anthropicMessages(tokens: ["Hi"]))
        _ = await collect(provider(fake).stream(ChatRequest(model: "claude-x", messages: userHello)))
        XCTAssertEqual(fake.requests.first?.jsonBody?["max_tokens"] as? Int, 4096)
    }

    func testPrefillIsAFinalAssistantMessageWithoutTrailingWhitespace() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.anthropicMessages(tokens: [" world", "!"]))
        let request = ChatRequest(model: "claude-x", messages: userHello, prefill: "Hello ")
        let outcome = await collect(provider(fake).stream(request))
        let messages = try XCTUnwrap(fake.requests.first?.jsonBody?["messages"] as? [[String: String]])
        XCTAssertEqual(messages.last, ["role": "assistant", "content": "Hello"])
        XCTAssertEqual("Hello " + outcome.text, "Hello world!")
        XCTAssertTrue(provider(fake).supportsPrefill)
    }

    func testMaxTokensStopReasonIsLength() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.anthropicMessages(tokens: ["a"], stopReason: "max_tokens"))
        let outcome = await collect(provider(fake).stream(ChatRequest(model: "claude-x", messages: userHello)))
        XCTAssertEqual(outcome.finish, .length)
    }

    func testErrorEventAfter200IsUpstreamError() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.eventStream(writes: [
            richStream[0], richStream[7], richStream[8],
            event("error", #"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#),
        ]))
        let outcome = await collect(provider(fake).stream(ChatRequest(model: "claude-x", messages: userHello)))
        XCTAssertEqual(outcome.text, "Bonjour ")
        XCTAssertEqual(outcome.providerError?.code, .upstreamError)
        XCTAssertTrue(outcome.providerError?.message.contains("Overloaded") ?? false)
        XCTAssertEqual(fake.requests.count, 1)
    }

    func testStreamEndingBeforeMessageStopIsTruncated() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.eventStream(writes: Array(richStream.prefix(9))))
        let outcome = await collect(provider(fake).stream(ChatRequest(model: "claude-x", messages: userHello)))
        XCTAssertEqual(outcome.providerError?.code, .upstreamTruncated)
    }

    func testUnauthorizedNeverShowsTheKey() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.json(#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key \#(apiKey)"}}"#, status: 401))
        let outcome = await collect(provider(fake).stream(ChatRequest(model: "claude-x", messages: userHello)))
        XCTAssertEqual(outcome.providerError?.code, .upstreamUnauthorized)
        XCTAssertFalse(String(describing: outcome.error as Any).contains(apiKey))
    }

    func testConfiguredModelsArePrefixed() async throws {
        let fake = try FakeUpstream()
        let models = await provider(fake).models()
        XCTAssertEqual(models, [ModelInfo(id: "anthropic:claude-x", provider: "anthropic", label: "claude-x")])
    }
}
