@testable import ParleyEvents
@testable import ParleyServer
@testable import ParleyTransfer
import Synchronization
import XCTest

/// Streams of one message take turns; different messages do not wait for each other.
final class SubscriptionQueueTests: XCTestCase {
    private final class Overlap: Sendable {
        private let state = Mutex((inside: 0, most: 0))
        func enter() { state.withLock { $0.inside += 1; $0.most = max($0.most, $0.inside) } }
        func leave() { state.withLock { $0.inside -= 1 } }
        var most: Int { state.withLock { $0.most } }
    }

    func testRunsForOneMessageNeverOverlap() async {
        let queue = SubscriptionQueue()
        let overlap = Overlap()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    await queue.run("m1") {
                        overlap.enter()
                        try? await Task.sleep(for: .milliseconds(2))
                        overlap.leave()
                    }
                }
            }
        }
        XCTAssertEqual(overlap.most, 1)
        let busy = await queue.busyCount
        XCTAssertEqual(busy, 0, "nothing is left behind")
    }

    func testRunsForDifferentMessagesOverlap() async {
        let queue = SubscriptionQueue()
        let overlap = Overlap()
        let bothInside = AsyncStream<Void>.makeStream()
        let release = AsyncStream<Void>.makeStream()
        async let first: Void = queue.run("a") {
            overlap.enter()
            bothInside.continuation.yield()
            for await _ in release.stream { break }
            overlap.leave()
        }
        async let second: Void = queue.run("b") {
            overlap.enter()
            bothInside.continuation.yield()
            for await _ in release.stream { break }
            overlap.leave()
        }
        var inside = 0
        for await _ in bothInside.stream {
            inside += 1
            if inside == 2 { break }
        }
        XCTAssertEqual(overlap.most, 2)
        release.continuation.yield()
        release.continuation.yield()
        release.continuation.finish()
        _ = await (first, second)
    }

    func testAThrowingRunHandsOverToTheNext() async {
        struct Failure: Error {}
        let queue = SubscriptionQueue()
        do {
            try await queue.run("m") { throw Failure() }
            XCTFail("should throw")
        } catch {}
        let value = await queue.run("m") { 7 }
        XCTAssertEqual(value, 7)
    }
}
