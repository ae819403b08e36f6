import Dispatch
@testable import ParleyHTTP
import XCTest

/// The writer's own rules, over a socketpair and a real socket loop: what the heartbeat adds, and
/// how the connection is taken and given back.
final class EventStreamWriterTests: XCTestCase {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    func testAStreamWrittenAfterTheTimerReadTheClockIsNotIdle() throws {
        let stream = try SocketPairStream()
        defer { stream.close() }
        // The heartbeat timer read the clock, then a producer wrote before the timer looked at it.
        let timerNow = DispatchTime.now().uptimeNanoseconds
        stream.writer.write("data: fresh\n\n")
        stream.writer.heartbeat(now: timerNow, idleNanos: 1_000_000)
        stream.writer.write("data: next\n\n")
        XCTAssertEqual(stream.read(), 0, "the first call hands the socket over")
        let expected = "data: fresh\n\ndata: next\n\n"
        XCTAssertEqual(text(stream.receive(expected.utf8.count)), expected, "no ping in the middle of a busy stream")
    }

    func testAnIdleStreamGetsAPing() throws {
        let stream = try SocketPairStream()
        defer { stream.close() }
        XCTAssertEqual(stream.read(), 0)
        stream.writer.write("data: old\n\n")
        let later = DispatchTime.now().uptimeNanoseconds + 2_000_000
        stream.writer.heartbeat(now: later, idleNanos: 1_000_000)
        let expected = "data: old\n\n: ping\n\n"
        XCTAssertEqual(text(stream.receive(expected.utf8.count)), expected)
    }

    /// Bytes written before the hand-off wait; after it they are framed as chunks and sent from the
    /// producer's thread; the end gives the connection back once, and the reader then ends the body.
    func testTheConnectionIsTakenOnceAndGivenBackOnceAtTheEnd() throws {
        let stream = try SocketPairStream(chunked: true)
        defer { stream.close() }
        let closed = Counter()
        stream.writer.onClose { closed.increment() }
        stream.writer.write("data: early\n\n")
        XCTAssertEqual(stream.writer.unsent, 13, "nothing is sent before the headers are out")
        XCTAssertEqual(stream.read(), 0)
        XCTAssertEqual(stream.suspends.current, 1)
        let early = "d\r\ndata: early\n\n\r\n"
        XCTAssertEqual(text(stream.receive(early.utf8.count)), early)
        stream.writer.write("data: late\n\n")
        let late = "c\r\ndata: late\n\n\r\n"
        XCTAssertEqual(text(stream.receive(late.utf8.count)), late)
        XCTAssertEqual(stream.resumes.current, 0, "an open stream keeps the connection")
        stream.writer.finish()
        XCTAssertEqual(stream.resumes.current, 1, "a drained, finished stream gives it back")
        XCTAssertEqual(closed.current, 0, "the response has not ended yet")
        XCTAssertEqual(stream.read(), EventStreamWriter.endOfStream, "libmicrohttpd writes the last chunk")
        XCTAssertEqual(closed.current, 1)
        XCTAssertEqual(stream.read(), EventStreamWriter.endWithError, "nothing after the end")
        XCTAssertEqual(stream.suspends.current, 1)
        XCTAssertEqual(stream.resumes.current, 1)
    }

    /// A full socket: bytes wait for the loop, which sends them when the peer reads, in order, and
    /// a finishing stream is given back only after the last byte.
    func testAFullSocketIsFinishedByTheLoopInOrder() throws {
        let stream = try SocketPairStream()
        defer { stream.close() }
        XCTAssertEqual(stream.read(), 0)
        let pieces = (0..<200).map { "data: \($0) \(String(repeating: "x", count: 1000))\n\n" }
        for piece in pieces { XCTAssertTrue(stream.writer.write(piece)) }
        stream.writer.finish()
        XCTAssertGreaterThan(stream.writer.unsent, 0, "the socket's small buffer took only part of it")
        XCTAssertEqual(stream.resumes.current, 0, "not given back before the last byte")
        let expected = pieces.joined()
        XCTAssertEqual(text(stream.receive(expected.utf8.count, timeout: 20)), expected)
        XCTAssertTrue(eventually { stream.resumes.current == 1 })
        XCTAssertEqual(stream.writer.unsent, 0)
        XCTAssertEqual(stream.read(), EventStreamWriter.endOfStream)
    }

    /// A peer that hangs up is noticed by the loop without a write: the stream closes and the
    /// connection goes back to libmicrohttpd, which closes it.
    func testAPeerHangingUpClosesTheStreamWithoutAWrite() throws {
        let stream = try SocketPairStream()
        defer { stream.close() }
        let closed = Counter()
        stream.writer.onClose { closed.increment() }
        XCTAssertEqual(stream.read(), 0)
        stream.hangUp()
        XCTAssertTrue(closed.wait(for: 1, timeout: 10))
        XCTAssertTrue(stream.writer.isClosed)
        XCTAssertEqual(stream.resumes.current, 1)
        XCTAssertEqual(stream.read(), EventStreamWriter.endWithError)
        XCTAssertFalse(stream.writer.write("data: late\n\n"))
    }
}
