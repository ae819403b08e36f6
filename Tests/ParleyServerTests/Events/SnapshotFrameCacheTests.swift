@testable import ParleyEvents
import ParleyGeneration
@testable import ParleyServer
import Synchronization
import XCTest

/// Snapshot frames: encoded once for equal snapshots (whatever their strings' storage), never shared
/// between snapshots whose bytes differ, and bounded in count and bytes.
final class SnapshotFrameCacheTests: XCTestCase {
    private func snapshot(_ content: String, id: String = "m1", blocks: [String]? = nil) -> GenerationSnapshot {
        GenerationSnapshot(messageID: id, status: .complete, blocks: blocks ?? ["<p>\(content)</p>"], tail: "",
                           tailHTML: nil, content: content, reasoning: "", parts: [])
    }

    private func address(_ bytes: [UInt8]) -> UnsafeRawPointer? {
        bytes.withUnsafeBytes { $0.baseAddress }
    }

    func testEqualSnapshotsShareOneEncodedFrame() {
        let cache = SnapshotFrameCache()
        let encodes = Counter()
        let text = String(repeating: "lorem ipsum ", count: 10_000)
        let first = cache.frame(for: snapshot(text), mode: .html) { encodes.increment(); return Array(text.utf8) }
        // The same text read again (as the store does per request): other storage, same bytes.
        let again = String(decoding: Array(text.utf8), as: UTF8.self)
        let second = cache.frame(for: snapshot(again), mode: .html) { encodes.increment(); return Array(again.utf8) }
        XCTAssertEqual(encodes.current, 1)
        XCTAssertEqual(address(first), address(second), "the same storage, not a copy")
    }

    func testSnapshotsThatDifferInAnyByteOrModeGetTheirOwnFrame() {
        let cache = SnapshotFrameCache()
        let encodes = Counter()
        func frame(_ snapshot: GenerationSnapshot, _ mode: EventStreamEncoder.Mode = .html) -> [UInt8] {
            cache.frame(for: snapshot, mode: mode) { encodes.increment(); return [1] }
        }
        _ = frame(snapshot("caf\u{E9}"))
        _ = frame(snapshot("cafe\u{301}"))  // canonically equal, different bytes
        _ = frame(snapshot("caf\u{E9}", id: "m2"))
        _ = frame(snapshot("caf\u{E9}", blocks: ["<p>other</p>"]))
        _ = frame(snapshot("caf\u{E9}"), .text)
        XCTAssertEqual(encodes.current, 5)
        _ = frame(snapshot("caf\u{E9}"))
        XCTAssertEqual(encodes.current, 5, "the first one is still cached")
    }

    func testTheCacheKeepsTheMostRecentFramesWithinItsBounds() {
        let cache = SnapshotFrameCache(capacity: 3, byteLimit: 1000)
        for index in 0..<5 { _ = cache.frame(for: snapshot("s\(index)"), mode: .html) { [UInt8](repeating: 0, count: 100) } }
        XCTAssertEqual(cache.count, 3)
        let encodes = Counter()
        _ = cache.frame(for: snapshot("s4"), mode: .html) { encodes.increment(); return [] }
        _ = cache.frame(for: snapshot("s0"), mode: .html) { encodes.increment(); return [UInt8](repeating: 0, count: 100) }
        XCTAssertEqual(encodes.current, 1, "s4 is kept, s0 was evicted")
        // Bytes: a frame over the limit is not kept; frames are evicted until the total fits.
        _ = cache.frame(for: snapshot("huge"), mode: .html) { [UInt8](repeating: 0, count: 2000) }
        XCTAssertEqual(cache.count, 3)
        // s3, s4, s0 (100 each) and big (900): the oldest go until 1000 bytes fit: s0 and big remain.
        _ = cache.frame(for: snapshot("big"), mode: .html) { [UInt8](repeating: 0, count: 900) }
        XCTAssertEqual(cache.count, 2)
    }
}

/// Thread-safe counter.
private final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var current: Int { value.withLock { $0 } }
}
