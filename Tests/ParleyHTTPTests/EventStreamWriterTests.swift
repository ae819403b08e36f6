import Dispatch
@testable import ParleyHTTP
import XCTest

/// The writer's own rules, without a connection: what the heartbeat adds to the buffer.
final class EventStreamWriterTests: XCTestCase {
    private func buffered(_ writer: EventStreamWriter) -> String {
        var bytes = [CChar](repeating: 0, count: 4096)
        let count = bytes.withUnsafeMutableBufferPointer { buffer in
            writer.read(into: buffer.baseAddress!, maximum: buffer.count)
        }
        guard count > 0 else { return "" }
        return String(decoding: bytes[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func testAStreamWrittenAfterTheTimerReadTheClockIsNotIdle() {
        let writer = EventStreamWriter(backlogLimit: 1 << 20) { _ in }
        // The heartbeat timer read the clock, then a producer wrote before the timer looked at it.
        let timerNow = DispatchTime.now().uptimeNanoseconds
        writer.write("data: fresh\n\n")
        writer.heartbeat(now: timerNow, idleNanos: 1_000_000)
        XCTAssertEqual(buffered(writer), "data: fresh\n\n", "no ping in the middle of a busy stream")
    }

    func testAnIdleStreamGetsAPing() {
        let writer = EventStreamWriter(backlogLimit: 1 << 20) { _ in }
        writer.write("data: old\n\n")
        let later = DispatchTime.now().uptimeNanoseconds + 2_000_000
        writer.heartbeat(now: later, idleNanos: 1_000_000)
        XCTAssertEqual(buffered(writer), "data: old\n\n: ping\n\n")
    }
}
