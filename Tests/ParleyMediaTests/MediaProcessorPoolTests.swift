import Foundation
import ParleyMedia
import XCTest

/// The parent's pool: past workers + queue a call is `.busy` at once; past the timeout the child
/// is killed (SIGKILL) and the call is `.timeout`. The slow worker is the real
/// `parley-media-worker` behind a shell script that first sleeps (so the timing is not the decoder's).
final class MediaProcessorPoolTests: XCTestCase {
    private func slowWorker(seconds: Double) throws -> URL {
        let script = try MediaFixtures.directory(self).appendingPathComponent("slow-worker")
        try Data("#!/bin/sh\n/bin/sleep \(seconds)\nexec '\(MediaFixtures.worker.path)' \"$@\"\n".utf8).write(to: script)
        chmod(script.path, 0o755)
        return script
    }

    func testPastTheWorkersAndTheQueueACallIsBusy() async throws {
        let slow = try slowWorker(seconds: 1.5)
        let processor = try makeProcessor {
            $0.workerExecutable = slow
            $0.workers = 1
            $0.queue = 1
            $0.spares = 0  // a spare would start its sleep ahead; this test times the pool alone
        }
        let input = try file("a.txt", Data("text\n".utf8))
        let first = Task { try await processor.process(input, filename: "a.txt") }
        try await Task.sleep(for: .milliseconds(300))
        let second = Task { try await processor.process(input, filename: "a.txt") }
        try await Task.sleep(for: .milliseconds(300))
        let start = ContinuousClock.now
        let third = await refusal(processor, input)
        XCTAssertEqual(third, .busy)
        XCTAssertLessThan(ContinuousClock.now - start, .milliseconds(500), "refused at once, not after a wait")
        let firstMedia = try await first.value
        let secondMedia = try await second.value
        XCTAssertEqual(firstMedia.textCharacters, 5)
        XCTAssertEqual(secondMedia.textCharacters, 5, "the queued call ran once the slot was free")
        for media in [firstMedia, secondMedia] { try FileManager.default.removeItem(at: media.workDirectory) }
    }

    func testPastTheTimeoutTheWorkerIsKilled() async throws {
        let slow = try slowWorker(seconds: 30)
        let processor = try makeProcessor {
            $0.workerExecutable = slow
            $0.timeout = .milliseconds(400)
            $0.spares = 0  // a spare script's `sleep` would outlive the killed shell
        }
        let start = ContinuousClock.now
        let error = await refusal(processor, try file("a.txt", Data("text\n".utf8)))
        XCTAssertEqual(error, .timeout)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(5), "killed, not waited for")
    }

    func testATimeoutAlsoStopsARealDecode() async throws {
        let directory = try MediaFixtures.directory(self)
        let input = try MediaFixtures.image("12mp.jpg", in: directory, width: 4000, height: 3000)
        let processor = try makeProcessor { $0.timeout = .milliseconds(30) }
        let error = await refusal(processor, input)
        XCTAssertEqual(error, .timeout)
    }

    func testAMissingWorkerExecutableIsAClearError() async throws {
        let processor = try makeProcessor {
            $0.workerExecutable = URL(fileURLWithPath: "/nonexistent/parley-media-worker")
        }
        guard case .unreadable(let why) = await refusal(processor, try file("a.txt", Data("x\n".utf8))) else {
            return XCTFail("not unreadable")
        }
        XCTAssertTrue(why.contains("/nonexistent/parley-media-worker"), why)
    }
}
