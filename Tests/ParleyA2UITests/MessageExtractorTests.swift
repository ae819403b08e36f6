import ParleyA2UI
import ParleyPrimitives
import XCTest

/// The extractor reads `{"messages":[…]}` however the model's fragments fall: cut at every byte offset,
/// fed byte by byte, each element comes out whole, once, in order, as soon as it closes.
final class MessageExtractorTests: XCTestCase {
    private func whole() -> [MessageExtractor.Element] {
        let extractor = MessageExtractor(limits: SurfaceLimits())
        return extractor.feed(A2UISamples.formArguments) + extractor.finish()
    }

    func testTheWholeArgumentsGiveEachMessage() throws {
        let elements = whole()
        XCTAssertEqual(elements.count, 4)
        guard case .message(let first) = elements[0], case .message(let last) = elements[3] else {
            return XCTFail("not messages: \(elements)")
        }
        XCTAssertEqual(first["createSurface"]?["surfaceId"], .string("trip"))
        XCTAssertEqual(last["updateDataModel"]?["value"]?["ratio"], .integer(-1500))
        XCTAssertEqual(last["updateDataModel"]?["value"]?["seats"], .integer(2))
        XCTAssertEqual(last["updateDataModel"]?["value"]?["none"], .null)
        // The same values Foundation's parser reads from the whole text.
        let parsed = try XCTUnwrap(JSON(parsing: A2UISamples.formArguments)?["messages"]?.arrayValue)
        XCTAssertEqual(elements, parsed.map(MessageExtractor.Element.message))
    }

    func testArgumentsCutAtEveryByteOffsetGiveTheSameMessages() {
        let expected = whole()
        let bytes = Array(A2UISamples.formArguments.utf8)
        for cut in 0...bytes.count {
            // Split inside a multi-byte character too: a fragment is bytes, as a provider may send them.
            let extractor = MessageExtractor(limits: SurfaceLimits())
            var got = extractor.feed(bytes: bytes[..<cut])
            got += extractor.feed(bytes: bytes[cut...])
            got += extractor.finish()
            XCTAssertEqual(got, expected, "cut at byte \(cut)")
            XCTAssertNil(extractor.syntaxError)
        }
    }

    func testEachMessageComesOutAsSoonAsItCloses() throws {
        let text = A2UISamples.formArguments
        let extractor = MessageExtractor(limits: SurfaceLimits())
        var seen = 0
        var offsets: [Int] = []
        for (offset, byte) in text.utf8.enumerated() {
            seen += extractor.feed(bytes: [byte][...]).count
            if offsets.count < seen { offsets.append(offset) }
        }
        XCTAssertEqual(offsets.count, 4)
        // The first message is out when its closing brace is read, long before the arguments end.
        let firstClose = try XCTUnwrap(text.range(of: "catalog.json\"}}")).upperBound
        XCTAssertEqual(offsets[0], text.utf8.distance(from: text.startIndex, to: firstClose) - 1)
    }

    func testBrokenArgumentsKeepWhatClosedAndSayWhy() {
        let extractor = MessageExtractor(limits: SurfaceLimits())
        let first = extractor.feed(#"{"messages":[{"version":"v0.9"}, {"a": tru }"#)
        XCTAssertEqual(first, [.message(.object(["version": .string("v0.9")]))])
        XCTAssertNotNil(extractor.syntaxError)
        XCTAssertEqual(extractor.feed("]}"), [])
    }

    func testAnUnfinishedDocumentIsAnErrorAtTheEnd() {
        let extractor = MessageExtractor(limits: SurfaceLimits())
        _ = extractor.feed(#"{"messages":[{"version":"v0.9"}"#)
        XCTAssertNil(extractor.syntaxError)
        _ = extractor.finish()
        XCTAssertNotNil(extractor.syntaxError)
    }

    func testDeepNestingAndLongStringsAreFaultsAndTheNextMessageStillComes() {
        let extractor = MessageExtractor(limits: SurfaceLimits(maxStringBytes: 100, maxDepth: 8))
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let long = String(repeating: "x", count: 101)
        let text = #"{"messages":["# + deep + #", {"a":""# + long + #""}, {"ok":1}]}"#
        let elements = extractor.feed(text) + extractor.finish()
        XCTAssertEqual(elements.count, 3)
        guard case .fault(0, let deepReason) = elements[0], case .fault(1, let longReason) = elements[1] else {
            return XCTFail("\(elements)")
        }
        XCTAssertTrue(deepReason.contains("deeper than 8"), deepReason)
        XCTAssertTrue(longReason.contains("longer than 100"), longReason)
        XCTAssertEqual(elements[2], .message(.object(["ok": .integer(1)])))
    }

    func testANumberOutOfRangeIsAFaultAndTheOtherMessagesStand() {
        let session = SurfaceSession(board: A2UISamples.board())
        let messages = [A2UISamples.create("s").text, A2UISamples.components("s", [A2UISamples.text("root")]).text,
                        #"{"version":"v0.9","updateDataModel":{"surfaceId":"s","path":"/n","value":{"big":1e999}}}"#,
                        A2UISamples.data("s", path: "/ok", .integer(1)).text]
        var emitted = session.feed(call: "c1", #"{"messages":["# + messages.joined(separator: ",") + "]}")
        let finished = session.finish(call: "c1")
        emitted += finished.emitted
        XCTAssertEqual(emitted.count, 3, "create, components and the good update go out")
        XCTAssertFalse(emitted.contains { $0.message.text.contains("big") }, "the refused update is not sent")
        XCTAssertEqual(emitted.last?.message["updateDataModel"]?["path"], .string("/ok"))
        XCTAssertEqual(finished.result.errors.count, 1)
        XCTAssertTrue(finished.result.text.contains("number out of range"), finished.result.text)
    }

    func testOtherKeysAndNonArrayMessagesYieldNothing() {
        let extractor = MessageExtractor(limits: SurfaceLimits())
        XCTAssertEqual(extractor.feed(#"{"other":[{"a":1}],"messages":{"b":2}}"#) + extractor.finish(), [])
    }
}

extension MessageExtractor {
    /// Feeds raw bytes (a fragment may end inside a UTF-8 character).
    func feed(bytes: ArraySlice<UInt8>) -> [Element] {
        feed(utf8: Array(bytes))
    }
}

/// One reply's render_ui calls: what a call drew and what it had refused, bounded.
final class SurfaceSessionTests: XCTestCase {
    func testACallReportsWhatItDrewAndAtMostMaxErrorsErrors() {
        let session = SurfaceSession(board: A2UISamples.board())
        let bad = Array(repeating: #"{"version":"v0.8"}"#, count: 100).joined(separator: ",")
        var emitted = session.feed(call: "c1", #"{"messages":["# + bad + ",")
        emitted += session.feed(call: "c1", A2UISamples.create("s").text + "," + A2UISamples.components("s", [A2UISamples.text("root")]).text)
        XCTAssertEqual(emitted.map(\.surfaceID), ["s", "s"])
        let finished = session.finish(call: "c1")
        XCTAssertEqual(finished.emitted, [], "the arguments never closed: nothing more")
        XCTAssertEqual(finished.result.drawn.map(\.surfaceID), ["s"])
        XCTAssertEqual(finished.result.errors.count, SurfaceSession.maxErrors)
        // 100 refused messages, and the arguments' syntax error (unfinished): the rest counted.
        XCTAssertEqual(finished.result.unlisted, 100 + 1 - SurfaceSession.maxErrors)
        XCTAssertFalse(finished.result.isError, "something was drawn")
        XCTAssertTrue(finished.result.text.contains("Drawn: s (2 messages)"), finished.result.text)
        XCTAssertTrue(finished.result.text.contains("and \(100 + 1 - SurfaceSession.maxErrors) more"), finished.result.text)
    }
}
