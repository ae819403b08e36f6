import Foundation
@testable import ParleyTransfer
import XCTest

/// yajl as the import's incremental parser: events in order whatever the piece boundaries, strict JSON,
/// UTF-8 checked, depth bounded, and a consumer's throw stops it.
final class JSONEventParserTests: XCTestCase {
    private func events(_ text: String, pieceSize: Int = .max, maxDepth: Int = 16) throws -> [JSONEvent] {
        try events(Array(text.utf8), pieceSize: pieceSize, maxDepth: maxDepth)
    }

    private func events(_ bytes: [UInt8], pieceSize: Int = .max, maxDepth: Int = 16) throws -> [JSONEvent] {
        var seen: [JSONEvent] = []
        let parser = JSONEventParser(maxDepth: maxDepth) { seen.append($0) }
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + min(pieceSize, bytes.count))
            try bytes[offset..<end].withUnsafeBytes { try parser.feed($0) }
            offset = end
        }
        try parser.finish()
        return seen
    }

    func testEventsAreTheSameWhereverThePiecesAreCut() throws {
        let text = #"{"a":[1,-2.5e3,"x\u00e9 ☃ 😀",true,false,null],"b":{"c":"\"q\""},"n":12345678901234567890}"#
        let whole = try events(text)
        XCTAssertEqual(whole, [
            .startObject, .key("a"), .startArray, .number("1"), .number("-2.5e3"), .string("xé ☃ 😀"), .bool(true),
            .bool(false), .null, .endArray, .key("b"), .startObject, .key("c"), .string("\"q\""), .endObject,
            .key("n"), .number("12345678901234567890"), .endObject,
        ])
        for size in 1...7 {
            XCTAssertEqual(try events(text, pieceSize: size), whole, "pieces of \(size) bytes")
        }
    }

    func testWhatIsNotStrictJSONIsRefused() {
        for bad in ["{\"a\":1,}", "[1] [2]", "{\"a\":1", "// c\n{}", "{'a':1}", "[01]", ""] {
            XCTAssertThrowsError(try events(bad), bad)
        }
        XCTAssertThrowsError(try events([0x5B, 0x22, 0xFF, 0xFE, 0x22, 0x5D]), "a string that is not UTF-8")
    }

    func testDepthIsBounded() {
        XCTAssertNoThrow(try events(String(repeating: "[", count: 8) + String(repeating: "]", count: 8), maxDepth: 8))
        XCTAssertThrowsError(try events(String(repeating: "[", count: 100_000), maxDepth: 8)) { error in
            XCTAssertEqual(error as? JSONEventParser.Failure, .tooDeep(8))
        }
    }

    func testAConsumerThatThrowsStopsTheParse() {
        struct Enough: Error {}
        var count = 0
        let parser = JSONEventParser(maxDepth: 4) { _ in
            count += 1
            if count == 3 { throw Enough() }
        }
        XCTAssertThrowsError(try Array("[1,2,3,4,5]".utf8).withUnsafeBytes { try parser.feed($0) }) { error in
            XCTAssertTrue(error is Enough)
        }
        XCTAssertEqual(count, 3)
    }
}
