import ParleyProviders
import ParleyTestSupport
import XCTest

final class DemoProviderTests: XCTestCase {
    private let request = ChatRequest(model: "demo", messages: [ChatMessage(role: .user, content: "Tell me about *tides*")])

    func testAnswerHasHeadingQuoteListsCodeTableAndLink() async {
        let outcome = await collect(DemoProvider(tokensPerSecond: 0).stream(request))
        let text = outcome.text
        XCTAssertNil(outcome.error)
        XCTAssertTrue(text.hasPrefix("## "))
        XCTAssertTrue(text.contains("Tell me about *tides*"))
        XCTAssertTrue(text.contains("\n- "))
        XCTAssertTrue(text.contains("\n1. "))
        XCTAssertTrue(text.contains("```swift\n"))
        XCTAssertTrue(text.contains("| --- | --- |"))
        XCTAssertTrue(text.contains("](https://"))
        XCTAssertEqual(text, DemoProvider.answer(to: "Tell me about *tides*"))
        XCTAssertEqual(outcome.events.last, .finish(.stop))
    }

    func testTokensAreShortWordPieces() async {
        let outcome = await collect(DemoProvider(tokensPerSecond: 0).stream(request))
        let tokens = outcome.events.compactMap { if case .text(let text) = $0 { text } else { nil } }
        XCTAssertGreaterThan(tokens.count, 100)
        XCTAssertTrue(tokens.allSatisfy { $0.trimmingCharacters(in: .whitespacesAndNewlines).count <= 4 })
    }

    func testOutputIsDeterministic() async {
        let first = await collect(DemoProvider(tokensPerSecond: 0).stream(request))
        let second = await collect(DemoProvider(tokensPerSecond: 0).stream(request))
        XCTAssertEqual(first.events, second.events)
    }

    func testPrefillContinuesFromItsLength() async {
        let full = DemoProvider.answer(to: "Tell me about *tides*")
        let prefill = String(full.prefix(57))
        var continued = request
        continued.prefill = prefill
        let outcome = await collect(DemoProvider(tokensPerSecond: 0).stream(continued))
        XCTAssertEqual(prefill + outcome.text, full)
    }

    func testPaceFollowsTokensPerSecond() async throws {
        let start = ContinuousClock.now
        var count = 0
        for try await event in DemoProvider(tokensPerSecond: 100).stream(request) {
            if case .text = event { count += 1 }
            if count == 10 { break }
        }
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(95))
    }

    func testCancellingStopsAtOnce() async throws {
        // Tokens 500 ms apart: a cancel that waited for the next token would take up to 500 ms.
        let latency = await medianOfThree("cancel -> demo stream ended") {
            let stream = DemoProvider(tokensPerSecond: 2).stream(request)
            // Cancelled once the consumer got a token and waits for the next (not after a sleep).
            let (received, signal) = AsyncStream<Void>.makeStream()
            let consumer = Task { await collect(stream, each: { if case .text = $0 { signal.yield() } }) }
            var tokens = received.makeAsyncIterator()
            _ = await tokens.next()
            let cancelledAt = ContinuousClock.now
            consumer.cancel()
            let outcome = await consumer.value
            XCTAssertNil(outcome.finish)
            return ContinuousClock.now - cancelledAt
        }
        XCTAssertLessThan(latency, .milliseconds(100))
    }
}
