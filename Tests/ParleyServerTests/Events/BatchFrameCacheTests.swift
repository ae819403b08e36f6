@testable import ParleyEvents
import ParleyGeneration
import XCTest

/// A reply's batch is encoded once for every stream in the same mode; another array (even with the
/// same events), another mode, or a batch holding a snapshot is never taken from the cache.
final class BatchFrameCacheTests: XCTestCase {
    private func batch(_ text: String, id: Int64 = 12) -> [GenerationEvent] {
        [GenerationEvent(id: id, payload: .delta(text)), GenerationEvent(id: id + 1, payload: .tail(text))]
    }

    func testTheSameBatchIsEncodedOnceForEveryStreamInAMode() {
        let cache = BatchFrameCache()
        let snapshots = SnapshotFrameCache()
        let events = batch("a")
        for mode in [EventStreamEncoder.Mode.text, .html] {
            let encoder = EventStreamEncoder(mode: mode)
            let pieces = (0..<100).map { _ in encoder.pieces(events, sharing: snapshots, batches: cache) }
            XCTAssertEqual(pieces[0].flatMap { $0 }, encoder.encode(events))
            // Shared storage: the bytes were built once.
            let first = pieces[0][0].withUnsafeBytes { $0.baseAddress }
            XCTAssertTrue(pieces.allSatisfy { $0[0].withUnsafeBytes { $0.baseAddress } == first })
        }
        XCTAssertEqual(cache.count, 2)
    }

    func testAnotherArrayIsEncodedForItselfEvenWithTheSameEvents() {
        let cache = BatchFrameCache()
        var encoded = 0
        let first = batch("a")
        let second = batch("a")  // equal, but another array: never matched by content or id
        let mode = EventStreamEncoder.Mode.text
        _ = cache.pieces(for: first, mode: mode) { encoded += 1; return [[1]] }
        let again = cache.pieces(for: second, mode: mode) { encoded += 1; return [[2]] }
        XCTAssertEqual(encoded, 2)
        XCTAssertEqual(again, [[2]])
        XCTAssertEqual(cache.pieces(for: first, mode: mode) { encoded += 1; return [[3]] }, [[1]])
        XCTAssertEqual(encoded, 2)
    }

    func testBatchesWithASnapshotAreNotKept() {
        let cache = BatchFrameCache()
        let events = [GenerationEvent(id: 1, payload: .snapshot(GenerationSnapshot(
            messageID: "m", status: .streaming, blocks: [], tail: "x", tailHTML: nil, content: "x", reasoning: "",
            parts: [])))]
        var encoded = 0
        for _ in 0..<2 { _ = cache.pieces(for: events, mode: .text) { encoded += 1; return [[0]] } }
        XCTAssertEqual(encoded, 2)
        XCTAssertEqual(cache.count, 0)
    }

    func testAtMostCapacityBatchesAreKept() {
        let cache = BatchFrameCache(capacity: 4)
        let batches = (0..<10).map { batch("t\($0)", id: Int64($0) * 2) }
        for events in batches { _ = cache.pieces(for: events, mode: .text) { [[0]] } }
        XCTAssertEqual(cache.count, 4)
    }
}
