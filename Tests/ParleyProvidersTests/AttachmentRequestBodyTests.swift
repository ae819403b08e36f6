import Foundation
import ParleyPrimitives
import ParleyProviders
import ParleyTestSupport
import XCTest

/// What each dialect's request body holds for a user turn with files, byte for byte as the fake
/// upstream received it over HTTP: OpenAI's text part then `image_url` data URLs, Anthropic's `image`
/// blocks then the text, documents as `<document>` text before the turn's words; and a turn without
/// files exactly as before.
final class AttachmentRequestBodyTests: XCTestCase {
    private let client = sharedClient
    /// The first four bytes of a PNG: base64 `iVBORw==`.
    private let image = ChatAttachment.image(mediaType: "image/png", data: [0x89, 0x50, 0x4E, 0x47])
    private let document = ChatAttachment.document(filename: "notes.md", mediaType: "text/markdown", text: "# Notes\nline")
    private var question: ChatMessage {
        ChatMessage(role: .user, content: "What is this?", attachments: [image, document])
    }

    private func openAIBody(_ request: ChatRequest) async throws -> String {
        let fake = try FakeUpstream()
        fake.enqueue(.openAIChat(tokens: ["ok"]))
        _ = await collect(OpenAICompatibleProvider(baseURL: fake.baseURL, client: client).stream(request))
        return try XCTUnwrap(fake.requests.last).bodyText
    }

    private func anthropicBody(_ request: ChatRequest) async throws -> String {
        let fake = try FakeUpstream()
        fake.enqueue(.anthropicMessages(tokens: ["ok"]))
        _ = await collect(AnthropicProvider(baseURL: fake.baseURL, apiKey: "k", client: client).stream(request))
        return try XCTUnwrap(fake.requests.last).bodyText
    }

    func testOpenAIGetsATextPartThenTheImageAsADataURL() async throws {
        let body = try await openAIBody(ChatRequest(model: "gpt-4o", messages: [question]))
        XCTAssertEqual(body, #"""
            {"messages":[{"content":[{"text":"<document name=\"notes.md\" type=\"text/markdown\">\n# Notes\nline\n</document>\n\nWhat is this?","type":"text"},{"image_url":{"url":"data:image/png;base64,iVBORw=="},"type":"image_url"}],"role":"user"}],"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true}}
            """#)
    }

    func testAnthropicGetsTheImageBlockThenTheText() async throws {
        let body = try await anthropicBody(ChatRequest(model: "claude-x", messages: [question]))
        XCTAssertEqual(body, #"""
            {"max_tokens":4096,"messages":[{"content":[{"source":{"data":"iVBORw==","media_type":"image/png","type":"base64"},"type":"image"},{"text":"<document name=\"notes.md\" type=\"text/markdown\">\n# Notes\nline\n</document>\n\nWhat is this?","type":"text"}],"role":"user"}],"model":"claude-x","stream":true}
            """#)
    }

    func testDocumentsAloneKeepStringContent() async throws {
        let turn = ChatMessage(role: .user, content: "Sum it up.", attachments: [
            .document(filename: "a.txt", mediaType: "text/plain", text: "alpha"),
            .document(filename: "b.csv", mediaType: "text/csv", text: "x,y"),
        ])
        let expected = #""content":"<document name=\"a.txt\" type=\"text/plain\">\nalpha\n</document>\n\n"#
            + #"<document name=\"b.csv\" type=\"text/csv\">\nx,y\n</document>\n\nSum it up.","role":"user""#
        let openAI = try await openAIBody(ChatRequest(model: "m", messages: [turn]))
        XCTAssertTrue(openAI.contains(expected), openAI)
        let anthropic = try await anthropicBody(ChatRequest(model: "m", messages: [turn]))
        XCTAssertTrue(anthropic.contains(expected), anthropic)
    }

    func testTurnsWithoutAttachmentsAreEncodedAsBefore() async throws {
        let history = userHello + [ChatMessage(role: .assistant, content: "Hi!"), ChatMessage(role: .user, content: "Again")]
        let openAI = try await openAIBody(ChatRequest(model: "m", messages: history))
        XCTAssertEqual(openAI, #"{"messages":[{"content":"Be brief.","role":"system"},{"content":"Hello","role":"user"},"#
            + #"{"content":"Hi!","role":"assistant"},{"content":"Again","role":"user"}],"model":"m","stream":true,"#
            + #""stream_options":{"include_usage":true}}"#)
        let anthropic = try await anthropicBody(ChatRequest(model: "m", messages: history))
        XCTAssertEqual(anthropic, #"{"max_tokens":4096,"messages":[{"content":"Hello","role":"user"},"#
            + #"{"content":"Hi!","role":"assistant"},{"content":"Again","role":"user"}],"model":"m","stream":true,"#
            + #""system":"Be brief."}"#)
    }

    func testAFilenameCannotCloseItsTag() {
        let attachment = ChatAttachment.document(filename: #"a"><b & c.txt"#, mediaType: "text/plain", text: "t")
        XCTAssertEqual(attachment.documentText,
                       "<document name=\"a&quot;&gt;&lt;b &amp; c.txt\" type=\"text/plain\">\nt\n</document>")
        XCTAssertNil(image.documentText)
    }

    func testAnImageOnlyTurnSendsNoEmptyText() async throws {
        let turn = ChatMessage(role: .user, content: "", attachments: [image])
        let openAI = try await openAIBody(ChatRequest(model: "m", messages: [turn]))
        XCTAssertTrue(openAI.contains(#""content":[{"image_url":{"url":"data:image/png;base64,iVBORw=="},"type":"image_url"}]"#), openAI)
        let anthropic = try await anthropicBody(ChatRequest(model: "m", messages: [turn]))
        XCTAssertTrue(anthropic.contains(#""content":[{"source":{"data":"iVBORw==","media_type":"image/png","type":"base64"},"type":"image"}]"#),
                      anthropic)
    }

    /// After tool results, Anthropic's user turn is one block list: the results, the images, the text.
    func testAnthropicMergesAnImageTurnAfterToolResults() async throws {
        let history = [
            ChatMessage(role: .user, content: "Look"),
            ChatMessage(role: .assistant, content: "", toolCalls: [ChatToolCall(id: "t1", name: "f", arguments: "{}")]),
            .toolResult(id: "t1", content: "done", isError: false),
            ChatMessage(role: .user, content: "And this?", attachments: [image]),
        ]
        let body = try await anthropicBody(ChatRequest(model: "m", messages: history))
        XCTAssertTrue(body.contains(#"{"content":[{"content":"done","is_error":false,"tool_use_id":"t1","type":"tool_result"},"#
            + #"{"source":{"data":"iVBORw==","media_type":"image/png","type":"base64"},"type":"image"},"#
            + #"{"text":"And this?","type":"text"}],"role":"user"}"#), body)
    }

    /// A 4 MiB image reaches the upstream whole: its data URL decodes to the very bytes sent.
    func testAFewMegabyteImageArrivesIntact() async throws {
        var generator = SplitMix64(seed: 21)
        let bytes = (0..<(4 << 20)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let turn = ChatMessage(role: .user, content: "big", attachments: [.image(mediaType: "image/jpeg", data: bytes)])
        let fake = try FakeUpstream()
        fake.enqueue(.openAIChat(tokens: ["ok"]))
        let started = ContinuousClock.now
        _ = await collect(OpenAICompatibleProvider(baseURL: fake.baseURL, client: client)
            .stream(ChatRequest(model: "m", messages: [turn])))
        let json = try XCTUnwrap(fake.requests.last?.jsonBody)
        let content = try XCTUnwrap((json["messages"] as? [[String: Any]])?.first?["content"] as? [[String: Any]])
        let url = try XCTUnwrap((content.last?["image_url"] as? [String: Any])?["url"] as? String)
        let prefix = "data:image/jpeg;base64,"
        XCTAssertTrue(url.hasPrefix(prefix))
        XCTAssertEqual(Data(base64Encoded: String(url.dropFirst(prefix.count))).map(Array.init), bytes)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(20), "encoding a few MB is one pass")
    }
}
