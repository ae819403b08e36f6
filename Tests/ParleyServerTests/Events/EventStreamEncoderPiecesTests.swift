@testable import ParleyEvents
import ParleyGeneration
@testable import ParleyServer
import XCTest

/// Writing in pieces changes nothing on the wire, and the snapshot's frame is the shared piece.
final class EventStreamEncoderPiecesTests: XCTestCase {
    private let events: [GenerationEvent] = [
        GenerationEvent(id: 10, payload: .snapshot(GenerationSnapshot(
            messageID: "m", status: .streaming, blocks: ["<h1>T</h1>"], tail: "par", tailHTML: "<p>par</p>\n",
            content: "# T\n\npar", reasoning: "", parts: [.text("# T\n\npar", firstBlock: 0, blockCount: 1)]))),
        GenerationEvent(id: 11, payload: .block(index: 1, html: "<p>para</p>")),
        GenerationEvent(id: 11, payload: .tailHTML("", keep: 0)),
        GenerationEvent(id: 12, payload: .delta("a")),
        GenerationEvent(id: 13, payload: .done(GenerationOutcome(
            status: .complete, finishReason: "stop", usage: nil, patch: [], blockCount: 2, errorCode: nil,
            errorMessage: nil))),
    ]

    func testPiecesJoinedAreTheEncodedBytesInBothModes() {
        for mode in [EventStreamEncoder.Mode.html, .text] {
            let encoder = EventStreamEncoder(mode: mode)
            let pieces = encoder.pieces(events, sharing: SnapshotFrameCache())
            XCTAssertEqual(pieces.flatMap { $0 }, encoder.encode(events))
            XCTAssertEqual(pieces.count, 3, "id line, shared snapshot frame, the rest")
            XCTAssertTrue(String(decoding: pieces[1], as: UTF8.self).hasPrefix("event: snapshot\ndata: {"))
        }
    }

    func testTwoSubscribersGetTheSameSnapshotStorage() {
        let cache = SnapshotFrameCache()
        let encoder = EventStreamEncoder(mode: .html)
        let first = encoder.pieces(events, sharing: cache)
        let second = encoder.pieces(events, sharing: cache)
        XCTAssertEqual(first[1].withUnsafeBytes { $0.baseAddress }, second[1].withUnsafeBytes { $0.baseAddress })
    }
}
