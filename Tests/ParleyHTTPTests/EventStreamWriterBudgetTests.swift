@testable import ParleyHTTP
import XCTest

/// Writers sharing one budget, over socketpairs and a real socket loop: eviction closes the largest,
/// sends and closes give bytes back, and a write that could not be counted is refused. Bytes written
/// before the hand-off stay queued, so the counts there are exact.
final class EventStreamWriterBudgetTests: XCTestCase {
    func testTheLargestBacklogIsClosedWhenTheTotalPassesTheBudget() throws {
        let budget = StreamBacklogBudget<EventStreamWriter>(limit: 100_000)
        let closed = Counter()
        let large = try SocketPairStream(budget: budget)
        let small = try SocketPairStream(budget: budget)
        defer { large.close(); small.close() }
        large.writer.onClose { closed.increment() }
        XCTAssertTrue(large.writer.write([UInt8](repeating: 1, count: 70_000)))
        XCTAssertTrue(small.writer.write([UInt8](repeating: 2, count: 20_000)))
        // The small stream's write passes the budget: the large one is closed, the writer keeps going.
        XCTAssertTrue(small.writer.write([UInt8](repeating: 3, count: 20_000)))
        XCTAssertTrue(large.writer.isClosed)
        XCTAssertEqual(closed.current, 1)
        XCTAssertEqual(large.writer.unsent, 0, "the evicted backlog is freed at once")
        XCTAssertFalse(large.writer.write([1]))
        XCTAssertFalse(small.writer.isClosed)
        XCTAssertEqual(budget.total, 40_000)
        XCTAssertEqual(budget.memberCount, 1)
        XCTAssertEqual(large.read(), EventStreamWriter.endWithError, "the connection is dropped")
        XCTAssertEqual(large.suspends.current, 0, "a stream dropped before the hand-off never takes the socket")
    }

    func testAWriterThatIsItselfTheLargestIsRefusedAndClosed() throws {
        let budget = StreamBacklogBudget<EventStreamWriter>(limit: 100_000)
        let other = try SocketPairStream(budget: budget)
        let stream = try SocketPairStream(budget: budget)
        defer { other.close(); stream.close() }
        XCTAssertTrue(other.writer.write([UInt8](repeating: 1, count: 30_000)))
        XCTAssertFalse(stream.writer.write([UInt8](repeating: 2, count: 80_000)))
        XCTAssertTrue(stream.writer.isClosed)
        XCTAssertFalse(other.writer.isClosed)
        XCTAssertEqual(budget.total, 30_000)
    }

    func testSendsAndCloseGiveTheirBytesBack() throws {
        let budget = StreamBacklogBudget<EventStreamWriter>(limit: 100_000)
        let stream = try SocketPairStream(budget: budget)
        defer { stream.close() }
        XCTAssertTrue(stream.writer.write([UInt8](repeating: 1, count: 50_000)))
        XCTAssertEqual(budget.total, 50_000)
        XCTAssertEqual(stream.read(), 0)
        // The socket took what its buffer holds; the peer reads 16 KiB and the loop sends more.
        let afterHandOff = stream.writer.unsent
        XCTAssertLessThan(afterHandOff, 50_000, "bytes the socket took leave the budget")
        XCTAssertEqual(budget.unsent(of: stream.writer), afterHandOff)
        XCTAssertEqual(stream.receive(16_384).count, 16_384)
        XCTAssertTrue(eventually {
            let unsent = stream.writer.unsent
            return unsent < afterHandOff && budget.unsent(of: stream.writer) == unsent
        }, "sent bytes leave the budget: \(stream.writer.unsent) unsent, \(budget.total) counted")
        XCTAssertGreaterThan(stream.writer.unsent, 0, "still some backlog for the close to free")
        stream.writer.connectionEnded()
        XCTAssertEqual(budget.total, 0)
        XCTAssertEqual(budget.memberCount, 0)
        XCTAssertEqual(stream.writer.unsent, 0, "a gone client's backlog is freed")
    }

    func testAFinishedStreamLeavesTheBudgetWhenDrained() throws {
        let budget = StreamBacklogBudget<EventStreamWriter>(limit: 100_000)
        let stream = try SocketPairStream(budget: budget)
        defer { stream.close() }
        XCTAssertTrue(stream.writer.write("data: last\n\n"))
        stream.writer.finish()
        XCTAssertEqual(budget.total, 12)
        XCTAssertEqual(stream.read(), 0)
        XCTAssertEqual(String(decoding: stream.receive(12), as: UTF8.self), "data: last\n\n")
        XCTAssertEqual(budget.total, 0)
        XCTAssertEqual(stream.resumes.current, 1)
        XCTAssertEqual(stream.read(), EventStreamWriter.endOfStream)
        XCTAssertEqual(budget.memberCount, 0)
        XCTAssertEqual(budget.total, 0)
    }

    /// Many writers growing at once from many threads while the loop sends what their peers read:
    /// the total is never seen above the budget, and what stays counted equals what the open writers
    /// hold.
    func testConcurrentWritersStayWithinTheBudget() throws {
        let budget = StreamBacklogBudget<EventStreamWriter>(limit: 1 << 20)
        let loop = try XCTUnwrap(StreamSocketLoop())
        defer { loop.stop() }
        let streams = try (0..<16).map { _ in try SocketPairStream(loop: loop, backlogLimit: 8 << 20, budget: budget) }
        defer { for stream in streams { stream.close() } }
        for stream in streams { XCTAssertEqual(stream.read(), 0) }
        let piece = [UInt8](repeating: 7, count: 4096)
        DispatchQueue.concurrentPerform(iterations: streams.count) { index in
            var count = 0
            while streams[index].writer.write(piece) {
                count += 1
                if count % 3 == 0 { _ = streams[index].receiveAvailable(maximum: 4096) }
                XCTAssertLessThanOrEqual(budget.total, budget.limit)
                if count > 2_000 { break }
            }
        }
        let open = streams.map(\.writer).filter { !$0.isClosed }
        XCTAssertLessThan(open.count, streams.count, "someone passed the budget and was closed")
        // The loop may still be sending what the peers read last.
        XCTAssertTrue(eventually { budget.total == open.reduce(0) { $0 + $1.unsent } },
                      "\(budget.total) counted, \(open.reduce(0) { $0 + $1.unsent }) held")
        XCTAssertLessThanOrEqual(budget.total, budget.limit)
    }
}
