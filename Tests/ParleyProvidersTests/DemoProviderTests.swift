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

/// The demo model sees: it describes each image's size (read from its header) and each document.
final class DemoAttachmentTests: XCTestCase {
    /// The signature and IHDR of a 640×480 PNG (the rest of the file does not matter to the header).
    static let png640x480: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13,
                                      0x49, 0x48, 0x44, 0x52, 0, 0, 0x02, 0x80, 0, 0, 0x01, 0xE0, 8, 6, 0, 0, 0]

    func testTheDemoDescribesImagesAndDocuments() async {
        let padded = Self.png640x480 + [UInt8](repeating: 0, count: 12_345 - Self.png640x480.count)
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0, 0, 0xFF, 0xC0, 0, 11, 8, 0x00, 0x30, 0x00, 0x40, 1, 0, 0, 0]
        let turn = ChatMessage(role: .user, content: "What are these?", attachments: [
            .image(mediaType: "image/png", data: padded),
            .image(mediaType: "image/jpeg", data: jpeg),
            .image(mediaType: "image/webp", data: [1, 2, 3]),
            .document(filename: "notes.md", mediaType: "text/markdown", text: String(repeating: "n", count: 1_500)),
        ])
        let outcome = await collect(DemoProvider(tokensPerSecond: 0).stream(ChatRequest(model: "demo", messages: [turn])))
        XCTAssertTrue(outcome.text.hasPrefix("""
            ## Demo answer

            I see 3 images: 640×480 PNG, 12,345 bytes; 64×48 JPEG, 21 bytes; WEBP, 3 bytes. \
            I read 1 document: notes.md (text/markdown, 1,500 characters).

            You wrote: `What are these?`
            """), outcome.text)
        XCTAssertEqual(outcome.text, DemoProvider.answer(to: "What are these?", attachments: turn.attachments))
    }

    func testOneImageIsSingular() {
        XCTAssertEqual(DemoProvider.description(of: [.image(mediaType: "image/png", data: Self.png640x480)]),
                       "I see 1 image: 640×480 PNG, 29 bytes.")
        XCTAssertNil(DemoProvider.description(of: []))
    }

    func testGIFAndWebPSizesAreRead() {
        let gif: [UInt8] = Array("GIF89a".utf8) + [0x20, 0x03, 0x58, 0x02, 0, 0, 0]
        XCTAssertEqual(DemoProvider.description(of: [.image(mediaType: "image/gif", data: gif)]),
                       "I see 1 image: 800×600 GIF, 13 bytes.")
        // A lossless WebP: 14 bits of width - 1, then 14 bits of height - 1, after the 0x2F signature.
        let bits: UInt32 = (100 - 1) | ((50 - 1) << 14)
        let webP: [UInt8] = Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8L".utf8) + [0, 0, 0, 0, 0x2F]
            + [UInt8(bits & 0xFF), UInt8((bits >> 8) & 0xFF), UInt8((bits >> 16) & 0xFF), UInt8(bits >> 24)]
        XCTAssertEqual(DemoProvider.description(of: [.image(mediaType: "image/webp", data: webP)]),
                       "I see 1 image: 100×50 WEBP, 25 bytes.")
    }

    func testACutHeaderGivesNoSize() {
        let cut = Array(Self.png640x480.prefix(20))
        XCTAssertEqual(DemoProvider.description(of: [.image(mediaType: "image/png", data: cut)]),
                       "I see 1 image: PNG, 20 bytes.")
        let jpegCut: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x10, 0x00]
        XCTAssertEqual(DemoProvider.description(of: [.image(mediaType: "image/jpeg", data: jpegCut)]),
                       "I see 1 image: JPEG, 6 bytes.")
    }
}
