import Foundation
import XCTest
@testable import ParleySSE
import ParleyTestSupport

final class SSEDecoderTests: XCTestCase {
    private func decodeAll(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [SSEEvent] {
        var decoder = SSEDecoder()
        return try decoder.decode(Array(text.utf8)) + decoder.finish()
    }

    // MARK: - Fields

    func testDataLineDispatchesOnEmptyLineWithDefaultType() throws {
        XCTAssertEqual(try decodeAll("data: hello\n\n"), [SSEEvent(type: "message", data: "hello")])
    }

    func testMultiLineDataIsJoinedWithLineFeed() throws {
        XCTAssertEqual(try decodeAll("data: a\ndata: b\ndata:\n\n").map(\.data), ["a\nb\n"])
    }

    func testEventFieldSetsTypeForOneEventOnly() throws {
        let events = try decodeAll("event: delta\ndata: x\n\ndata: y\n\n")
        XCTAssertEqual(events.map(\.type), ["delta", "message"])
    }

    func testOnlyOneLeadingSpaceIsDropped() throws {
        XCTAssertEqual(try decodeAll("data:  two\n\ndata:none\n\n").map(\.data), [" two", "none"])
    }

    func testFieldWithoutColonIsNameWithEmptyValue() throws {
        // "data" alone appends an empty line: the data buffer is "\n", so an event with empty data is dispatched.
        XCTAssertEqual(try decodeAll("data\n\n"), [SSEEvent(data: "")])
    }

    func testEmptyDataBufferIsNotDispatched() throws {
        XCTAssertEqual(try decodeAll("event: x\n\nid: 3\n\n"), [])
    }

    func testCommentsAreIgnoredAndCounted() throws {
        var decoder = SSEDecoder()
        let events = try decoder.decode(Array(": ping - 2026\n:\ndata: a\n\n".utf8))
        XCTAssertEqual(events.map(\.data), ["a"])
        XCTAssertEqual(decoder.comments, 2)
    }

    func testUnknownFieldsAreIgnored() throws {
        XCTAssertEqual(try decodeAll("foo: bar\ndata: a\n\n").map(\.data), ["a"])
    }

    func testIdPersistsAcrossEvents() throws {
        let events = try decodeAll("id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n")
        XCTAssertEqual(events.map(\.id), ["7", "7", ""])
    }

    func testIdContainingNulIsIgnored() throws {
        let events = try decodeAll("id: 1\ndata: a\n\nid: 2\u{0}x\ndata: b\n\n")
        XCTAssertEqual(events.map(\.id), ["1", "1"])
    }

    func testRetryAcceptsDigitsOnly() throws {
        var decoder = SSEDecoder()
        _ = try decoder.decode(Array("retry: 1500\n\nretry: 12a\n\nretry: -3\n\nretry:\n\ndata: x\n\n".utf8))
        XCTAssertEqual(decoder.retry, 1500)
    }

    func testIncompleteEventIsDiscardedAtFinish() throws {
        var decoder = SSEDecoder()
        XCTAssertEqual(try decoder.decode(Array("data: a\n\ndata: b\n".utf8)).map(\.data), ["a"])
        XCTAssertEqual(decoder.finish(), [])
    }

    func testLastLineWithoutTerminatorIsNotDispatched() throws {
        XCTAssertEqual(try decodeAll("data: a\n\ndata: b\n\n\ndata: c"), [SSEEvent(data: "a"), SSEEvent(data: "b")])
    }

    // MARK: - Line ends and BOM

    func testCRAndCRLFAndLFAreAllLineEnds() throws {
        for text in ["data: a\rdata: b\r\r", "data: a\r\ndata: b\r\n\r\n", "data: a\ndata: b\n\n", "data: a\r\ndata: b\n\r"] {
            XCTAssertEqual(try decodeAll(text).map(\.data), ["a\nb"], "\(Array(text.utf8))")
        }
    }

    func testCRAtEndOfChunkFollowedByLFIsOneLineEnd() throws {
        var decoder = SSEDecoder()
        var events = try decoder.decode(Array("data: a\r".utf8))
        events += try decoder.decode(Array("\ndata: b\r".utf8))
        events += try decoder.decode(Array("\n\r".utf8))
        events += try decoder.decode(Array("\n".utf8))
        XCTAssertEqual(events.map(\.data), ["a\nb"])
    }

    func testCRAtEndOfChunkFollowedByCRIsTwoLineEnds() throws {
        var decoder = SSEDecoder()
        var events = try decoder.decode(Array("data: a\r".utf8))
        events += try decoder.decode(Array("\r".utf8))
        XCTAssertEqual(events.map(\.data), ["a"])
    }

    func testLeadingBOMIsSkippedOnce() throws {
        var decoder = SSEDecoder()
        var events = try decoder.decode([0xEF, 0xBB])
        events += try decoder.decode([0xBF] + Array("data: a\n\n".utf8))
        XCTAssertEqual(events.map(\.data), ["a"])
        // A second BOM is part of the field name, so the line is an unknown field.
        events = try decoder.decode([0xEF, 0xBB, 0xBF] + Array("data: b\n\n".utf8))
        XCTAssertEqual(events, [])
    }

    // MARK: - UTF-8 and limits

    func testInvalidUTF8Throws() {
        var decoder = SSEDecoder()
        XCTAssertThrowsError(try decoder.decode(Array("data: ".utf8) + [0xC3, 0x28] + [0x0A, 0x0A])) { error in
            XCTAssertEqual(error as? SSEError, .invalidUTF8)
        }
    }

    func testEventsBeforeAFaultInTheSamePieceAreKept() {
        var decoder = SSEDecoder()
        var events: [SSEEvent] = []
        let piece = Array("data: good\n\ndata: ".utf8) + [0xC3, 0x28] + [0x0A, 0x0A]
        XCTAssertThrowsError(try decoder.decode(piece, into: &events)) { error in
            XCTAssertEqual(error as? SSEError, .invalidUTF8)
        }
        XCTAssertEqual(events, [SSEEvent(data: "good")])
    }

    func testTruncatedUTF8CharacterBeforeLineEndThrows() {
        var decoder = SSEDecoder()
        XCTAssertThrowsError(try decoder.decode(Array("data: ".utf8) + [0xE2, 0x82] + [0x0A, 0x0A]))
    }

    func testCharacterSplitAcrossPiecesIsDecodedWhole() throws {
        var decoder = SSEDecoder()
        let bytes = Array("data: 😀\n\n".utf8)
        var events: [SSEEvent] = []
        for byte in bytes { events += try decoder.decode([byte]) }
        XCTAssertEqual(events.map(\.data), ["😀"])
    }

    func testLineLongerThanLimitThrowsEvenWithoutTerminator() throws {
        var decoder = SSEDecoder(maxLineBytes: 16)
        XCTAssertEqual(try decoder.decode(Array("data: 0123456789\n\n".utf8)).map(\.data), ["0123456789"])
        XCTAssertThrowsError(try decoder.decode(Array("data: 0123456789abc".utf8))) { error in
            XCTAssertEqual(error as? SSEError, .lineTooLong(limit: 16))
        }
    }

    func testEventDataLargerThanLimitThrows() {
        var decoder = SSEDecoder(maxEventBytes: 10)
        XCTAssertThrowsError(try decoder.decode(Array("data: 12345\ndata: 67890\n".utf8))) { error in
            XCTAssertEqual(error as? SSEError, .eventTooLarge(limit: 10))
        }
    }

    // MARK: - Property: cutting the stream anywhere changes nothing

    private static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ParleyProvidersTests/Fixtures")

    private func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: Self.fixtures.appendingPathComponent(name)))
    }

    /// The body of a raw HTTP/1.1 chunked response.
    private func dechunkedBody(_ raw: [UInt8]) throws -> [UInt8] {
        let crlf: [UInt8] = [0x0D, 0x0A]
        func find(_ needle: [UInt8], from: Int) -> Int? {
            guard raw.count >= needle.count else { return nil }
            var i = from
            while i + needle.count <= raw.count {
                if raw[i..<(i + needle.count)].elementsEqual(needle) { return i }
                i += 1
            }
            return nil
        }
        let headerEnd = try XCTUnwrap(find(crlf + crlf, from: 0)) + 4
        var body: [UInt8] = []
        var position = headerEnd
        while let lineEnd = find(crlf, from: position) {
            let sizeText = try XCTUnwrap(String(bytes: raw[position..<lineEnd], encoding: .ascii))
            let size = try XCTUnwrap(Int(sizeText, radix: 16))
            if size == 0 { break }
            body += raw[(lineEnd + 2)..<(lineEnd + 2 + size)]
            position = lineEnd + 2 + size + 2
        }
        return body
    }

    private var multiByteStream: [UInt8] {
        var text = "\u{FEFF}: comment ✓\r\n"
        for (i, piece) in ["héllo", "😀🎉", "漢字かな", "Ω≈ç√", "👩‍👩‍👧 family", "", "end"].enumerated() {
            text += "id: \(i)\revent: tok\r\ndata: \(piece)\ndata: ∑\(i)\r\n\r"
        }
        return Array(text.utf8)
    }

    private func decode(_ pieces: [ArraySlice<UInt8>]) throws -> [SSEEvent] {
        var decoder = SSEDecoder()
        var events: [SSEEvent] = []
        for piece in pieces { events += try decoder.decode(piece) }
        return events + decoder.finish()
    }

    private func assertEveryTwoPieceCutMatches(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws {
        let whole = try decode([bytes[...]])
        XCTAssertFalse(whole.isEmpty, file: file, line: line)
        for cut in 0...bytes.count {
            let events = try decode([bytes[0..<cut], bytes[cut...]])
            if events != whole {
                XCTFail("cut at \(cut) changed the events", file: file, line: line)
                return
            }
        }
        XCTAssertEqual(try decode(bytes.indices.map { bytes[$0...$0] }), whole, "1-byte pieces", file: file, line: line)
        var generator = SplitMix64.forTest("random pieces")
        for _ in 0..<50 {
            var pieces: [ArraySlice<UInt8>] = []
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + Int.random(in: 0...40, using: &generator))
                pieces.append(bytes[start..<end])
                start = end
            }
            XCTAssertEqual(try decode(pieces), whole, "random pieces", file: file, line: line)
        }
    }

    func testStream1FixtureDecodesTheSameAtEveryCut() throws {
        let bytes = try fixture("stream1.sse")
        XCTAssertEqual(try decode([bytes[...]]).last?.data, "[DONE]")
        try assertEveryTwoPieceCutMatches(bytes)
    }

    func testToolStreamFixtureDecodesTheSameAtEveryCut() throws {
        try assertEveryTwoPieceCutMatches(try fixture("tool_stream.sse"))
    }

    func testMultiByteStreamDecodesTheSameAtEveryCut() throws {
        let events = try decode([multiByteStream[...]])
        XCTAssertEqual(events.count, 7)
        XCTAssertEqual(events[1].data, "😀🎉\n∑1")
        XCTAssertEqual(events[6].id, "6")
        try assertEveryTwoPieceCutMatches(multiByteStream)
    }

    func testLongCaptureDecodesTheSameInOneByteAndRandomPieces() throws {
        let body = try dechunkedBody(try fixture("raw_long.bin"))
        var decoder = SSEDecoder()
        let whole = try decoder.decode(body)
        XCTAssertEqual(whole.last?.data, "[DONE]")
        XCTAssertEqual(decoder.comments, 1)  // one ": ping - <time>" comment
        XCTAssertEqual(try decode(body.indices.map { body[$0...$0] }), whole)
        var generator = SplitMix64.forTest("random pieces of the long capture")
        var start = 0
        var pieces: [ArraySlice<UInt8>] = []
        while start < body.count {
            let end = min(body.count, start + Int.random(in: 1...700, using: &generator))
            pieces.append(body[start..<end])
            start = end
        }
        XCTAssertEqual(try decode(pieces), whole)
    }
}
