import Foundation
import ParleyTestSupport
import XCTest

/// Parley never changes what the model (or the user) said: invisible characters at the start, the
/// middle and the end of every piece arrive in the stored text and in the streamed deltas exactly,
/// with both providers, whether the upstream writes them as UTF-8 or as `\u` escapes. (On Linux,
/// JSONSerialization drops a U+FEFF at the start of a JSON string: "ab", "\u{FEFF}c", "d" became "abcd".)
final class InvisibleCharacterTests: XCTestCase {
    var upstream: FakeUpstream!
    var parley: TestParley!

    /// Every piece is one upstream delta (quotes, backslashes and controls are left out so the
    /// UTF-8 variant can be written without escaping).
    static let pieces = [
        "ab", "\u{FEFF}c", "d", "\u{FEFF}", "\u{200B}e\u{200B}", "f\u{2060}", "\u{2060}g", "\u{200C}\u{200D}",
        "h\u{FEFF}i", "\u{00AD}", "\u{034F}j", "\u{180E}", "\u{2062}k\u{2063}", "\u{FE0F}", "\u{202E}l\u{202C}",
        "\u{E0001}", "\u{FEFF}\u{FEFF}", " \u{FEFF} ", "end\u{FEFF}",
    ]
    static let question = "\u{FEFF}question\u{200B} \u{2060}"
    static let systemPrompt = "\u{FEFF}Be terse.\u{200B}"

    override func setUp() async throws {
        upstream = try FakeUpstream()
        parley = try TestParley(upstream: upstream, [
            "PARLEY_FRAME_INTERVAL_MS": "0",
            "PARLEY_ANTHROPIC_BASE_URL": upstream.baseURL, "PARLEY_ANTHROPIC_API_KEY": "test-key",
            "PARLEY_ANTHROPIC_MODELS": "claude-fake",
        ])
    }

    override func tearDown() async throws {
        await parley?.stop()
        upstream?.shutdown()
        parley = nil
        upstream = nil
    }

    private static func value(_ text: String, escaped: Bool) -> String {
        escaped ? ExactJSON.literal(text) : "\"\(text)\""
    }

    private static func openAI(escaped: Bool) -> [String] {
        func frame(_ field: String, _ text: String) -> String {
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"\(field)\":\(value(text, escaped: escaped))},\"finish_reason\":null}]}\n\n"
        }
        return pieces.map { frame("reasoning_content", $0) } + pieces.map { frame("content", $0) }
            + [UpstreamStreams.finish()]
    }

    private static func anthropic(escaped: Bool) -> [String] {
        func event(_ type: String, _ json: String) -> String { "event: \(type)\ndata: \(json)\n\n" }
        func delta(_ index: Int, _ kind: String, _ field: String, _ text: String) -> String {
            event("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":\(index),\"delta\":{\"type\":\"\(kind)\",\"\(field)\":\(value(text, escaped: escaped))}}")
        }
        return [
            event("message_start", #"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}"#),
            event("content_block_start", #"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#),
        ] + pieces.map { delta(0, "thinking_delta", "thinking", $0) } + [
            event("content_block_stop", #"{"type":"content_block_stop","index":0}"#),
            event("content_block_start", #"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#),
        ] + pieces.map { delta(1, "text_delta", "text", $0) } + [
            event("content_block_stop", #"{"type":"content_block_stop","index":1}"#),
            event("message_delta", #"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}"#),
            event("message_stop", #"{"type":"message_stop"}"#),
        ]
    }

    func testOpenAICompatibleDeltasKeepEveryCharacter() async throws {
        for escaped in [false, true] {
            try await assertExact(model: "openai:fake", writes: Self.openAI(escaped: escaped), escaped: escaped,
                                  escaped ? "OpenAI, \\u escapes" : "OpenAI, UTF-8")
        }
    }

    func testAnthropicDeltasKeepEveryCharacter() async throws {
        for escaped in [false, true] {
            try await assertExact(model: "anthropic:claude-fake", writes: Self.anthropic(escaped: escaped),
                                  escaped: escaped, escaped ? "Anthropic, \\u escapes" : "Anthropic, UTF-8")
        }
    }

    /// `escaped`: both the upstream's frames and Parley's request bodies write the characters as
    /// `\u` escapes; otherwise as UTF-8.
    private func assertExact(model: String, writes: [String], escaped: Bool, _ context: String) async throws {
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(.eventStream(writes: writes), start: attached))
        let created = try await parley.call("POST", "/api/conversations",
                                            body: ExactJSON.object([("model", model), ("system_prompt", Self.systemPrompt)],
                                                                  escaped: escaped))
        XCTAssertEqual(created.exact["system_prompt"]?.string, Self.systemPrompt, context)
        let id = try XCTUnwrap(created.exact["id"]?.string)
        let sent = try await parley.call("POST", "/api/conversations/\(id)/messages",
                                         body: ExactJSON.object([("content", Self.question)], escaped: escaped))
        XCTAssertEqual(sent.status, 201, sent.text)
        XCTAssertEqual(sent.exact["user_message"]?["content"]?.string, Self.question, "\(context): the user's text")
        let assistant = try XCTUnwrap(sent.exact["assistant_message"]?["id"]?.string)

        let read = try await parley.events(assistant, mode: "text", attached: attached)
        XCTAssertEqual(read.done?["status"] as? String, "complete", context)
        XCTAssertEqual(read.texts(of: "delta"), Self.pieces, "\(context): one delta per upstream delta, exactly")
        XCTAssertEqual(read.texts(of: "reasoning"), Self.pieces, "\(context): reasoning deltas")
        XCTAssertEqual(read.exactText, Self.pieces.joined(), context)

        _ = try await parley.finished(assistant)
        let stored = try await parley.call("GET", "/api/messages/\(assistant)")
        XCTAssertEqual(stored.exact["content"]?.string, Self.pieces.joined(), "\(context): stored answer")
        XCTAssertEqual(stored.exact["reasoning"]?.string, Self.pieces.joined(), "\(context): stored reasoning")
        let late = try await parley.events(assistant, mode: "text")
        XCTAssertEqual(late.exactText, Self.pieces.joined(), "\(context): snapshot content")
        XCTAssertEqual(late.exactReasoning, Self.pieces.joined(), "\(context): snapshot reasoning")
        let question = try await parley.call("GET", "/api/messages/\(try XCTUnwrap(sent.exact["user_message"]?["id"]?.string))")
        XCTAssertEqual(question.exact["content"]?.string, Self.question, "\(context): stored question")

        // What the model server was sent: the system prompt and the question, exactly.
        let request = try XCTUnwrap(upstream.requests.last { $0.method == "POST" })
        let body = try XCTUnwrap(ExactJSON.parse(request.body), context)
        let contents = body["messages"]?.array?.compactMap { $0["content"]?.string } ?? []
        XCTAssertEqual(contents.last, Self.question, "\(context): the question sent upstream")
        let system = body["system"]?.string ?? contents.first
        XCTAssertEqual(system, Self.systemPrompt, "\(context): the system prompt sent upstream")
    }
}
