import Foundation
import ParleyTestSupport
import ParleyUpstream
import Synchronization
import XCTest

/// Cancelling at any moment (before, during or after the headers) ends as `cancelled` or a whole
/// response, never another error and never a hang.
final class CancelRaceTests: XCTestCase {
    func testCancellingAtRandomMomentsEndsCleanly() async throws {
        let head = Array("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n".utf8)
        let rest = Array("X-A: b\r\nContent-Length: 5\r\n\r\nhello".utf8)
        // The random choices (the server's pause inside the headers, the moment of each cancel) come
        // from one printed seed; the threads' timing around them stays the machine's.
        var generator = SplitMix64.forTest("cancel moments")
        let pauses = (0..<200).map { _ in Int.random(in: 0...2, using: &generator) }
        let cancelAfter = (0..<200).map { _ in Int.random(in: 0...4000, using: &generator) }
        let served = Mutex(0)
        let fake = try FakeUpstream { _ in
            var script = FakeUpstream.Script.raw(head + rest, cuts: [head.count])
            let index = served.withLock { count in defer { count += 1 }; return count }
            script.steps.insert(.sleep(milliseconds: pauses[index % pauses.count]), at: 1)
            return script
        }
        defer { fake.shutdown() }
        let client = UpstreamClient()
        var outcomes: [String: Int] = [:]
        for round in 0..<10 {
            try await withThrowingTaskGroup(of: String.self) { group in
                for slot in 0..<20 {
                    let delay = cancelAfter[round * 20 + slot]
                    let task = Task { () -> String in
                        do {
                            let response = try await client.send(UpstreamRequest(url: fake.baseURL + "/"))
                            var count = 0
                            for try await piece in response.body { count += piece.count }
                            return count == 5 || Task.isCancelled ? "ok" : "short"
                        } catch let error as UpstreamError {
                            return "\(error)"
                        }
                    }
                    group.addTask {
                        try await Task.sleep(for: .microseconds(delay))
                        task.cancel()
                        return try await task.value
                    }
                }
                for try await outcome in group { outcomes[outcome, default: 0] += 1 }
            }
        }
        for outcome in outcomes.keys {
            XCTAssertTrue(outcome == "ok" || outcome == "cancelled", "unexpected outcome \(outcome): \(outcomes)")
        }
    }
}
