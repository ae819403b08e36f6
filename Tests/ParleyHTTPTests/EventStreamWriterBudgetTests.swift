@testable import ParleyHTTP
import XCTest

/// Writers sharing one budget, without connections: eviction closes the largest, reads and closes
/// give bytes back, and a write that could not be counted is refused.
final class EventStreamWriterBudgetTests: XCTestCase {
    private func drain(_ writer: EventStreamWriter, maximum: Int) -> Int {
        Self.drain(writer, maximum: maximum)
    }

    private static func drain(_ writer: EventStreamWriter, maximum: Int) -> Int {
        var bytes = [CChar](repeating: 0, count: maximum)
        return bytes.withUnsafeMutableBufferPointer { writer.read(into: $0.baseAddress!, maximum: maximum) }
    }

    func testTheLargestBacklogIsClosedWhenTheTotalPassesTheBudget() {
        let budget = StreamBacklogBudget<EventStreamWriter>(limit: 100_000)
        let closed = Counter()
        let large = EventStreamWriter(backlogLimit: 1 << 20, budget: budget) { _ in }
        let small = EventStreamWriter(backlogLimit: 1 << 20, budget: budget) { _ in }
        large.onClose { closed.increment() }
        XCTAssertTrue(large.write([UInt8](repeating: 1, count: 70_000)))
        XCTAssertTrue(small.write([UInt8](repeating: 2, count: 20_000)))
        // The small stream's write passes the budget: the large one is closed, the writer keeps going.
        XCTAssertTrue(small.write([UInt8](repeating: 3, count: 20_000)))
        XCTAssertTrue(large.isClosed)
        XCTAssertEqual(closed.current, 1)
        XCTAssertEqual(large.unsent, 0, "the evicted backlog is freed at once")
        XCTAssertFalse(large.write([1]))
        XCTAssertFalse(small.isClosed)
        XCTAssertEqual(budget.total, 40_000)
        XCTAssertEqual(budget.memberCount, 1)
        XCTAssertEqual(drain(large, maximum: 100), EventStreamWriter.endWithError, "the connection is dropped")
    }

    func testAWriterThatIsItselfTheLargestIsRefusedAndClosed() {
        let budget = StreamBacklogBudget<EventStreamWriter>(limit: 100_000)
        let other = EventStreamWriter(backlogLimit: 1 << 20, budget: budget) { _ in }
        let writer = EventStreamWriter(backlogLimit: 1 << 20, budget: budget) { _ in }
        XCTAssertTrue(other.write([UInt8](repeating: 1, count: 30_000)))
        XCTAssertFalse(writer.write([UInt8](repeating: 2, count: 80_000)))
        XCTAssertTrue(writer.isClosed)
        XCTAssertFalse(other.isClosed)
        XCTAssertEqual(budget.total, 30_000)
    }

    func testReadsAndCloseGiveTheirBytesBack() {
        let budget = StreamBacklogBudget<EventStreamWriter>(limit: 100_000)
        let writer = EventStreamWriter(backlogLimit: 1 << 20, budget: budget) { _ in }
        XCTAssertTrue(writer.write([UInt8](repeating: 1, count: 50_000)))
        XCTAssertEqual(budget.total, 50_000)
        XCTAssertEqual(drain(writer, maximum: 16_384), 16_384)
        XCTAssertEqual(budget.total, 50_000 - 16_384)
        XCTAssertEqual(budget.unsent(of: writer), writer.unsent)
        writer.connectionEnded()
        XCTAssertEqual(budget.total, 0)
        XCTAssertEqual(budget.memberCount, 0)
        XCTAssertEqual(writer.unsent, 0, "a gone client's backlog is freed")
    }

    func testAFinishedStreamLeavesTheBudgetWhenDrained() {
        let budget = StreamBacklogBudget<EventStreamWriter>(limit: 100_000)
        let writer = EventStreamWriter(backlogLimit: 1 << 20, budget: budget) { _ in }
        XCTAssertTrue(writer.write("data: last\n\n"))
        writer.finish()
        XCTAssertEqual(drain(writer, maximum: 100), 12)
        XCTAssertEqual(drain(writer, maximum: 100), EventStreamWriter.endOfStream)
        XCTAssertEqual(budget.memberCount, 0)
        XCTAssertEqual(budget.total, 0)
    }

    /// Many writers growing at once from many threads: the total is never seen above the budget,
    /// and what stays counted equals what the open writers hold.
    func testConcurrentWritersStayWithinTheBudget() {
        let budget = StreamBacklogBudget<EventStreamWriter>(limit: 1 << 20)
        let writers = (0..<16).map { _ in EventStreamWriter(backlogLimit: 8 << 20, budget: budget) { _ in } }
        let piece = [UInt8](repeating: 7, count: 4096)
        DispatchQueue.concurrentPerform(iterations: writers.count) { index in
            var count = 0
            while writers[index].write(piece) {
                count += 1
                if count % 3 == 0 { _ = Self.drain(writers[index], maximum: 4096) }
                XCTAssertLessThanOrEqual(budget.total, budget.limit)
                if count > 2_000 { break }
            }
        }
        let open = writers.filter { !$0.isClosed }
        XCTAssertLessThan(open.count, writers.count, "someone passed the budget and was closed")
        XCTAssertEqual(budget.total, open.reduce(0) { $0 + $1.unsent })
        XCTAssertLessThanOrEqual(budget.total, budget.limit)
    }
}
