import Foundation
@testable import ParleyGeneration
import Synchronization
import XCTest

/// The shared frame timer: every due target is woken once, and a timer armed after a later one still
/// fires on time (the ticker keeps the earliest due and sleeps until it).
final class FrameTickerTests: XCTestCase {
    private final class Target: TickerTarget {
        let fired = Mutex<[ContinuousClock.Instant]>([])
        func timeUp() { fired.withLock { $0.append(.now) } }
        var count: Int { fired.withLock { $0.count } }
    }

    private func waitUntil(seconds: Double = 5, _ condition: () -> Bool) async throws {
        let end = Date().addingTimeInterval(seconds)
        while !condition(), Date() < end { try await Task.sleep(for: .milliseconds(5)) }
    }

    func testAnEarlierTimerArmedAfterALaterOneFiresFirst() async throws {
        let ticker = FrameTicker()
        defer { ticker.stop() }
        let late = Target()
        let early = Target()
        let armed = ContinuousClock.now
        ticker.schedule(late, after: .seconds(30))
        ticker.schedule(early, after: .milliseconds(20))
        try await waitUntil { early.count == 1 }
        XCTAssertEqual(early.count, 1)
        XCTAssertEqual(late.count, 0)
        let firedAfter = try XCTUnwrap(early.fired.withLock { $0.first }) - armed
        XCTAssertGreaterThanOrEqual(firedAfter, .milliseconds(19))
        XCTAssertLessThan(firedAfter, .seconds(3))
    }

    func testEveryTargetDueIsWokenOnce() async throws {
        let ticker = FrameTicker()
        defer { ticker.stop() }
        let targets = (0..<200).map { _ in Target() }
        for (index, target) in targets.enumerated() {
            ticker.schedule(target, after: .milliseconds(10 + index % 7))
        }
        try await waitUntil { targets.allSatisfy { $0.count == 1 } }
        try await Task.sleep(for: .milliseconds(50))
        XCTAssertEqual(targets.map(\.count), Array(repeating: 1, count: targets.count))
    }

    func testStoppedTickerFiresNothing() async throws {
        let ticker = FrameTicker()
        let target = Target()
        ticker.schedule(target, after: .milliseconds(20))
        ticker.stop()
        try await Task.sleep(for: .milliseconds(100))
        XCTAssertEqual(target.count, 0)
    }
}
