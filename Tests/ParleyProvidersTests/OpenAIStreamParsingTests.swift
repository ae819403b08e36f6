import Foundation
import ParleySSE
@testable import ParleyProviders
import XCTest

/// The pure parser (SSE decoder + OpenAI parser) over every two-piece cut of the captured streams.
final class OpenAIStreamParsingTests: XCTestCase {
    private func parse(_ pieces: [ArraySlice<UInt8>]) throws -> [ProviderEvent] {
        var decoder = SSEDecoder()
        var parser = OpenAIStreamParser()
        var events: [ProviderEvent] = []
        for piece in pieces {
            for event in try decoder.decode(piece) {
                events += try parser.consume(event)
            }
        }
        return events + (try parser.finish())
    }

    private func text(_ events: [ProviderEvent]) -> String {
        events.compactMap { if case .text(let text) = $0 { text } else { nil } }.joined()
    }

    func testStream1GivesTheSameTextAtEveryCut() throws {
        let bytes = try Fixture.bytes("stream1.sse")
        let whole = try parse([bytes[...]])
        XCTAssertEqual(text(whole), Fixture.stream1Text)
        XCTAssertEqual(whole.last, .finish(.stop))
        for cut in 0...bytes.count {
            XCTAssertEqual(try parse([bytes[..<cut], bytes[cut...]]), whole, "cut at \(cut)")
        }
    }

    func testToolStreamGivesOneCallWithConcatenatedArgumentsAtEveryCut() throws {
        let bytes = try Fixture.bytes("tool_stream.sse")
        let whole = try parse([bytes[...]])
        let deltas = whole.compactMap { if case .toolCall(let delta) = $0 { delta } else { nil } }
        XCTAssertEqual(Set(deltas.map(\.index)), [0])
        XCTAssertEqual(deltas.compactMap(\.id), ["call__0_get_weather_cmpl-5b665c81-8570-4e05-90d4-8c56538492c8"])
        XCTAssertEqual(deltas.compactMap(\.name), ["get_weather"])
        XCTAssertEqual(deltas.map(\.argumentsDelta).joined(), Fixture.toolArguments)
        XCTAssertEqual(whole.last, .finish(.toolCalls))
        // Every 4th offset keeps the test under a second; the SSE tests cover every offset of this file.
        for cut in stride(from: 0, through: bytes.count, by: 4) {
            XCTAssertEqual(try parse([bytes[..<cut], bytes[cut...]]), whole, "cut at \(cut)")
        }
    }

    func testReasoningContentAndUsageAndNullChoices() throws {
        let stream = """
        data: {"choices":[{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}]}

        data: {"choices":[{"index":0,"delta":{"reasoning":" more","content":null}}]}

        data:   {"choices" : [ {"index":0, "delta":{"content":"answer"}, "unknown": 1} ] }

        data: {"choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}

        data: {"choices":null,"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}

        data: [DONE]


        """
        let events = try parse([Array(stream.utf8)[...]])
        XCTAssertEqual(events, [.reasoning("think"), .reasoning(" more"), .text("answer"),
                                .usage(Usage(inputTokens: 5, outputTokens: 2)), .finish(.contentFilter)])
    }

    func testWhitespaceAroundFramesIsTrimmedLikeFoundation() throws {
        for text in ["[DONE]", " [DONE]", "[DONE]\t", "\u{00A0}[DONE]\u{2003}", "{\"a\":1}", "", " ", "é [DONE] é"] {
            XCTAssertEqual(OpenAIStreamParser.trimmingWhitespace(text), text.trimmingCharacters(in: .whitespaces), text)
        }
    }

    func testDoneWithNonBreakingSpacesEndsTheStream() throws {
        var parser = OpenAIStreamParser()
        _ = try parser.consume(SSEEvent(type: "message", data: "\u{00A0}[DONE] "))
        XCTAssertTrue(parser.isComplete)
    }
}
