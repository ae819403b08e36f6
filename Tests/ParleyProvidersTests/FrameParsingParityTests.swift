import Foundation
import ParleySSE
@testable import ParleyProviders
import XCTest

/// Frames are read by simdjson (`JSONFrameReader`) and, when it refuses them, by JSONDecoder: every
/// frame must give the same provider events (or the same error) as JSONDecoder alone, on every real
/// capture and on frames made to probe the edges (invisible characters, escapes, numbers, nulls).
final class FrameParsingParityTests: XCTestCase {
    /// The frames of a fixture: its SSE events, or for raw_long.bin its `data:` lines (each sits whole
    /// in one chunk of the HTTP framing).
    private func frames(_ name: String) throws -> [SSEEvent] {
        let raw = try Fixture.bytes(name)
        if name.hasSuffix(".bin") {
            return String(decoding: raw, as: UTF8.self).components(separatedBy: "\r\n")
                .filter { $0.hasPrefix("data: ") }
                .map { SSEEvent(data: String($0.dropFirst(6)).trimmingCharacters(in: .newlines)) }
        }
        var decoder = SSEDecoder()
        return try decoder.decode(raw) + decoder.finish()
    }

    /// Each frame through a fresh parser pair (served and JSONDecoder only), then the whole stream
    /// through one of each: events, errors and the closing events must match.
    private func assertSameAsJSONDecoder(_ events: [SSEEvent], openAI: Bool, file: StaticString = #filePath,
                                         line: UInt = #line) {
        func parsers() -> (any EventStreamParser, any EventStreamParser) {
            openAI ? (OpenAIStreamParser(), OpenAIStreamParser(frames: nil))
                : (AnthropicStreamParser(), AnthropicStreamParser(frames: nil))
        }
        var (served, reference) = parsers()
        for event in events {
            let got = Result { () throws(ProviderError) in try served.consume(event) }
            let want = Result { () throws(ProviderError) in try reference.consume(event) }
            XCTAssertEqual(got, want, event.data, file: file, line: line)
        }
        XCTAssertEqual(Result { () throws(ProviderError) in try served.finish() },
                       Result { () throws(ProviderError) in try reference.finish() }, file: file, line: line)
    }

    func testEveryCapturedOpenAIFrameReadsAsWithJSONDecoder() throws {
        var count = 0
        for name in ["stream1.sse", "tool_stream.sse", "openai_parallel_tools.sse", "raw_long.bin"] {
            let events = try frames(name)
            XCTAssertFalse(events.isEmpty, name)
            count += events.count
            assertSameAsJSONDecoder(events, openAI: true)
        }
        XCTAssertGreaterThan(count, 1300)
    }

    func testEveryCapturedAnthropicFrameReadsAsWithJSONDecoder() throws {
        assertSameAsJSONDecoder(try frames("anthropic_tool_use.sse"), openAI: false)
    }

    /// The fast path is taken: captured frames are read by simdjson, not handed on to JSONDecoder
    /// (except a frame with log probabilities, whose raw items JSONDecoder reads).
    func testCapturedFramesAreReadBySimdjson() throws {
        let reader = JSONFrameReader()
        for name in ["stream1.sse", "tool_stream.sse", "raw_long.bin"] {
            for event in try frames(name) where event.data != "[DONE]" {
                XCTAssertNotNil(reader.read(event.data, OpenAIChunk.init(frame:)), event.data)
            }
        }
        for event in try frames("anthropic_tool_use.sse") where !event.data.isEmpty {
            XCTAssertNotNil(reader.read(event.data, AnthropicEvent.init(frame:)), event.data)
        }
        XCTAssertNil(reader.read(#"{"choices":[{"index":0,"delta":{},"logprobs":{"content":[]}}]}"#, OpenAIChunk.init(frame:)))
        XCTAssertNotNil(reader.read(#"{"choices":[{"index":0,"delta":{},"logprobs":null}]}"#, OpenAIChunk.init(frame:)))
    }

    /// Frames that probe what each parser keeps, refuses or ignores, as `content`, as a tool call's
    /// arguments, and as Anthropic text.
    private static let probes: [String] = [
        "\u{FEFF}c", #"\ufeffc"#, "\u{200B}\u{200D}\u{2060}\u{00AD}", #"\u200b\u2060"#, "é😀", #"\ud83d\ude00"#,
        #"\u0000a"#, #"a\"b\\c\/d\b\f\n\r\t"#, " ", "",
        #"\ud800"#, #"\udc00"#, #"\ud800x"#, #"\ud800\u0041"#, #"\x"#, "tab\there", "\u{1}",
    ]

    func testProbedStringsReadAsWithJSONDecoder() {
        for text in Self.probes {
            assertSameAsJSONDecoder([
                SSEEvent(data: #"{"choices":[{"index":0,"delta":{"content":"\#(text)","reasoning":"\#(text)"}}]}"#),
                SSEEvent(data: #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"\#(text)","function":{"name":"f","arguments":"\#(text)"}}]}}]}"#),
                SSEEvent(data: #"{"choices":[{"index":0,"delta":{},"finish_reason":"\#(text)"}]}"#),
            ], openAI: true)
            assertSameAsJSONDecoder([
                SSEEvent(type: "content_block_delta",
                         data: #"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\#(text)"}}"#),
                SSEEvent(type: "content_block_delta",
                         data: #"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\#(text)"}}"#),
            ], openAI: false)
        }
    }

    func testOddShapesAndNumbersReadAsWithJSONDecoder() {
        let chunks = [
            #"{"choices":null,"usage":null,"error":null}"#, #"{"choices":[{"index":0,"delta":null,"finish_reason":null}]}"#,
            #"{"choices":[{"index":"0","delta":{"content":5,"reasoning":"r"}}]}"#, #"{"choices":"nope","model":{"x":[1,2]}}"#,
            #"{"choices":[{"index":1.0,"delta":{"content":"second"}}]}"#, #"{"choices":[null,{"index":0,"delta":{"content":"x"}}]}"#,
            #"{"choices":[{"index":0.0,"delta":{"content":"x"}}]}"#, #"{"choices":[{"index":1e0,"delta":{"content":"x"}}]}"#,
            #"{"choices":[{"index":-0,"delta":{"content":"x"}}]}"#, #"{"choices":[{"index":0.5,"delta":{"content":"x"}}]}"#,
            #"{"choices":[{"index":18446744073709551615,"delta":{"content":"x"}}]}"#,
            #"{"choices":[{"index":0,"delta":{"content":"x"}}],"created":100000000000000000000000000000}"#,
            #"{"choices":[{"index":0,"delta":{"content":"x"}}],"created":1E400}"#,
            #"{"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}"#,
            #"{"choices":[{"index":0,"delta":{"content":"x"}},]}"#, "\u{FEFF}{\"choices\":[]}", #"{"choices":[]} x"#,
            #"{"choices":[],"usage":{"prompt_tokens":7.0,"completion_tokens":3}}"#,
            #"{"choices":[],"usage":{"prompt_tokens":1e20,"completion_tokens":-2.7}}"#,
            #"{"choices":[],"usage":{"prompt_tokens":"7","completion_tokens":null}}"#,
            #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":""}},3]}}]}"#,
            #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2.0,"function":{"arguments":"{}"}}]}}]}"#,
            #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":"f"}]}}]}"#,
            #"{"choices":[{"index":0,"delta":{},"logprobs":{"content":[{"token":"a","logprob":-0.5,"bytes":[97],"n":3.0}]}}]}"#,
            #"{"choices":[{"index":0,"delta":{},"logprobs":{"content":null}}]}"#, #"{"choices":[{"index":0,"logprobs":7}]}"#,
            #"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#, #"{"\u0063hoices":[{"delta":{"content":"esc"}}]}"#,
            #"{"error":{"message":"boom"}}"#, #"{"error":"bang"}"#, #"{"error":42}"#, #"{"error":{"message":7}}"#,
            "{", "[1]", "\"text\"", "nul", "", " ", "[DONE]", "{}", " {} ",
        ]
        for chunk in chunks {
            assertSameAsJSONDecoder([SSEEvent(data: chunk)], openAI: true)
        }
        let anthropic = [
            #"{"type":"message_start","message":{"usage":{"input_tokens":12.0,"output_tokens":1}}}"#,
            #"{"type":"message_start","message":"x"}"#, #"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}"#,
            #"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            #"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":"many"}}"#,
            #"{"type":"error","error":{"type":"overloaded_error","message":"busy"}}"#, #"{"type":"error","error":"x"}"#,
            #"{"type":"message_stop"}"#, #"{"type":7}"#, "{", "",
        ]
        for data in anthropic {
            for type in ["message", "ping", "content_block_delta"] {
                assertSameAsJSONDecoder([SSEEvent(type: type, data: data)], openAI: false)
            }
        }
    }

    /// Deeply nested unknown fields: refused by both past the same depth.
    func testNestingDepthLimitIsJSONDecoders() {
        for depth in [500, 510, 511, 512, 513, 514, 520, 2000] {
            let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            assertSameAsJSONDecoder([SSEEvent(data: #"{"x":\#(nested),"choices":[{"delta":{"content":"d"}}]}"#)],
                                    openAI: true)
        }
    }
}
