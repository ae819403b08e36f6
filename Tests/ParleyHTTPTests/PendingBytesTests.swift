@testable import ParleyHTTP
import XCTest

/// The queue of unsent chunks: order, partial reads across chunks, merging of small writes only.
final class PendingBytesTests: XCTestCase {
    private func read(_ pending: inout PendingBytes, maximum: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: maximum)
        let (copied, _) = buffer.withUnsafeMutableBytes { pending.read(into: $0.baseAddress!, maximum: maximum) }
        return Array(buffer[..<copied])
    }

    func testBytesComeOutInOrderAcrossChunkBoundaries() {
        var pending = PendingBytes()
        let big = (0..<40_000).map { UInt8(truncatingIfNeeded: $0) }
        pending.append(Array("id: 1\n".utf8))
        pending.append(big)
        pending.append(Array("tail".utf8))
        XCTAssertEqual(pending.count, 6 + 40_000 + 4)
        var out: [UInt8] = []
        while !pending.isEmpty { out += read(&pending, maximum: 7_000) }
        XCTAssertEqual(out, Array("id: 1\n".utf8) + big + Array("tail".utf8))
        XCTAssertEqual(pending.count, 0)
        XCTAssertEqual(pending.chunkCount, 0)
    }

    func testSmallWritesMergeAndLargeOnesStayWholeChunks() {
        var pending = PendingBytes()
        for _ in 0..<100 { pending.append(Array("data: x\n\n".utf8)) }
        XCTAssertEqual(pending.chunkCount, 1, "900 bytes of small events are one chunk")
        let shared = [UInt8](repeating: 65, count: 1 << 20)
        pending.append(shared)
        pending.append(Array("id: 2\n".utf8))
        XCTAssertEqual(pending.chunkCount, 3, "a large write is never merged (merging would copy it)")
        XCTAssertEqual(pending.count, 900 + (1 << 20) + 6)
    }

    func testReleasedCountsFullyReadChunks() {
        var pending = PendingBytes()
        pending.append([UInt8](repeating: 1, count: 20_000))
        pending.append([UInt8](repeating: 2, count: 30_000))
        var buffer = [UInt8](repeating: 0, count: 25_000)
        let first = buffer.withUnsafeMutableBytes { pending.read(into: $0.baseAddress!, maximum: 25_000) }
        XCTAssertEqual(first.copied, 25_000)
        XCTAssertEqual(first.released, 20_000, "the first chunk is done, the second only started")
        let second = buffer.withUnsafeMutableBytes { pending.read(into: $0.baseAddress!, maximum: 25_000) }
        XCTAssertEqual(second.copied, 25_000)
        XCTAssertEqual(second.released, 30_000)
        XCTAssertTrue(pending.isEmpty)
    }

    /// Thousands of chunks read one by one: the queue compacts instead of shifting on every read.
    func testLongQueuesDrainCompletely() {
        var pending = PendingBytes()
        for index in 0..<5_000 { pending.append([UInt8](repeating: UInt8(index % 251), count: PendingBytes.mergeLimit)) }
        var total = 0
        var expected = 0
        while !pending.isEmpty {
            let bytes = read(&pending, maximum: PendingBytes.mergeLimit)
            XCTAssertEqual(bytes.first, UInt8(expected % 251))
            expected += 1
            total += bytes.count
        }
        XCTAssertEqual(total, 5_000 * PendingBytes.mergeLimit)
    }
}
