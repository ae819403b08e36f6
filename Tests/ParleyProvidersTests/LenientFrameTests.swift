import Foundation
import ParleySSE
@testable import ParleyProviders
import XCTest

/// The parsers decode frames with JSONDecoder: exact about text (a U+FEFF starting a string is kept)
/// and as lenient as before about everything else (nulls, numbers written as floats, fields of
/// another type are ignored rather than failing the frame).
final class LenientFrameTests: XCTestCase {
    private func openAI(_ data: String) throws(ProviderError) -> [ProviderEvent] {
        var parser = OpenAIStreamParser()
        return try parser.consume(SSEEvent(data: data))
    }

    func testOpenAITextKeepsALeadingByteOrderMark() throws {
        // Written as UTF-8 (JSONSerialization on Linux dropped it) and as an escape.
        XCTAssertEqual(try openAI(#"{"choices":[{"index":0,"delta":{"content":"\#u{FEFF}c"}}]}"#), [.text("\u{FEFF}c")])
        XCTAssertEqual(try openAI(#"{"choices":[{"index":0,"delta":{"content":"\ufeffc"}}]}"#), [.text("\u{FEFF}c")])
        XCTAssertEqual(try openAI(#"{"choices":[{"delta":{"reasoning":"\#u{FEFF}\#u{200B}"}}]}"#),
                       [.reasoning("\u{FEFF}\u{200B}")])
    }

    func testOpenAIFieldsOfAnotherTypeAreIgnoredNotFatal() throws {
        XCTAssertEqual(try openAI(#"{"choices":null,"usage":null,"error":null}"#), [])
        XCTAssertEqual(try openAI(#"{"choices":[{"index":0,"delta":null,"finish_reason":null}]}"#), [])
        XCTAssertEqual(try openAI(#"{"choices":[{"index":"0","delta":{"content":5,"reasoning":"r"}}]}"#),
                       [.reasoning("r")])
        XCTAssertEqual(try openAI(#"{"choices":"nope","model":{"x":[1,2]}}"#), [])
        XCTAssertEqual(try openAI(#"{"choices":[{"index":1.0,"delta":{"content":"second choice"}}]}"#), [])

        var parser = OpenAIStreamParser()
        _ = try parser.consume(SSEEvent(data: #"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#))
        _ = try parser.consume(SSEEvent(data: #"{"choices":[],"usage":{"prompt_tokens":7.0,"completion_tokens":3}}"#))
        XCTAssertEqual(try parser.finish(), [.usage(Usage(inputTokens: 7, outputTokens: 3)), .finish(.stop)])
    }

    func testOpenAIErrorsAndMalformedFrames() {
        for (data, message) in [(#"{"error":{"message":"boom"}}"#, "boom"), (#"{"error":"bang"}"#, "bang"),
                                (#"{"error":42}"#, "unknown error")] {
            XCTAssertThrowsError(try openAI(data)) { error in
                XCTAssertEqual((error as? ProviderError)?.code, .upstreamError)
                XCTAssertTrue("\(error)".contains(message), "\(error)")
            }
        }
        for data in ["{", "[1]", "\"text\"", "nul"] {
            XCTAssertThrowsError(try openAI(data)) { error in
                XCTAssertEqual((error as? ProviderError)?.code, .upstreamProtocol, data)
            }
        }
    }

    func testAnthropicTextKeepsALeadingByteOrderMarkAndIgnoresOddFields() throws {
        var parser = AnthropicStreamParser()
        let text = #"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\#u{FEFF}c"}}"#
        XCTAssertEqual(try parser.consume(SSEEvent(type: "content_block_delta", data: text)), [.text("\u{FEFF}c")])
        let thinking = #"{"type":"content_block_delta","index":"x","delta":{"type":"thinking_delta","thinking":"\#u{FEFF}t"}}"#
        XCTAssertEqual(try parser.consume(SSEEvent(type: "content_block_delta", data: thinking)), [.reasoning("\u{FEFF}t")])
        let odd = #"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":"many"}}"#
        XCTAssertEqual(try parser.consume(SSEEvent(type: "message_delta", data: odd)), [])
        XCTAssertEqual(try parser.consume(SSEEvent(type: "ping", data: "")), [])
        XCTAssertThrowsError(try parser.consume(SSEEvent(type: "error", data: #"{"type":"error","error":{"type":"overloaded_error","message":"busy"}}"#))) { error in
            XCTAssertTrue("\(error)".contains("(overloaded_error): busy"), "\(error)")
        }
        XCTAssertEqual(try parser.finish(), [.finish(.stop)])
    }
}
