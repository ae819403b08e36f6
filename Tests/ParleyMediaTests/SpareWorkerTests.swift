import Foundation
import ParleyMedia
import XCTest

/// Warm spares (PARLEY_MEDIA_SPARES): after a file, a `parley-media-worker` is started ahead and
/// waits; the next file takes it, and it still takes only that one file and exits. A spare that
/// died while waiting is replaced, never handed a file; `shutdown` leaves no process behind.
final class SpareWorkerTests: XCTestCase {
    /// The spare pids once `count` are ready (they start on their own threads), or a failure.
    private func readySpares(_ processor: MediaProcessor, count: Int = 1) async throws -> [Int32] {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let pids = processor.readySpares
            if pids.count >= count { return pids }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw MediaFixtures.Failure("no \(count) spare(s) within 20 s")
    }

    /// Whether `pid` is still a process (a zombie counts: not reaped yet).
    private func exists(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0
    }

    /// Waits until `pid` is gone or a zombie (its sockets closed), after a SIGKILL.
    private func waitUntilDead(_ pid: Int32) async throws {
        for _ in 0..<500 {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            if stat.isEmpty || stat.split(separator: ")").last?.split(separator: " ").first == "Z" { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw MediaFixtures.Failure("process \(pid) still runs after SIGKILL")
    }

    func testAfterAFileASpareWaitsAndTakesOnlyTheNextFile() async throws {
        let processor = try makeProcessor { $0.spares = 1 }
        XCTAssertEqual(processor.readySpares, [], "no spare before the first file")
        let input = try file("a.txt", Data("some text\n".utf8))
        _ = try await processed(processor, input)
        let spare = try await readySpares(processor)
        XCTAssertEqual(spare.count, 1)
        let media = try await processed(processor, input)
        XCTAssertEqual(media.textCharacters, 10)
        XCTAssertFalse(exists(spare[0]), "the spare took that one file, exited and was reaped")
        let next = try await readySpares(processor)
        XCTAssertNotEqual(next, spare, "a new spare waits for the next file")
        processor.shutdown()
    }

    func testAKilledSpareIsReplacedAndNeverGivenAFile() async throws {
        let directory = try MediaFixtures.directory(self)
        let processor = try makeProcessor { $0.spares = 1 }
        let image = try MediaFixtures.image("a.jpg", in: directory, width: 300, height: 200)
        _ = try await processed(processor, image)
        let spare = try await readySpares(processor)
        kill(spare[0], SIGKILL)
        try await waitUntilDead(spare[0])
        let media = try await processed(processor, image)
        XCTAssertEqual([media.width, media.height], [300, 200], "processed by a worker started on demand")
        XCTAssertFalse(exists(spare[0]), "the dead spare was reaped")
        let next = try await readySpares(processor)
        XCTAssertFalse(next.contains(spare[0]))
        processor.shutdown()
    }

    func testShutdownKillsTheSparesAndStartsNoMore() async throws {
        let processor = try makeProcessor { $0.spares = 2 }
        let input = try file("a.txt", Data("x\n".utf8))
        _ = try await processed(processor, input)
        let spares = try await readySpares(processor, count: 2)
        processor.shutdown()
        XCTAssertEqual(processor.readySpares, [])
        for pid in spares { XCTAssertFalse(exists(pid), "spare \(pid) killed and reaped") }
        _ = try await processed(processor, input)
        try await Task.sleep(for: .milliseconds(500))
        XCTAssertEqual(processor.readySpares, [], "a file after shutdown starts its own worker, and no spare")
    }

    func testWithoutSparesEveryWorkerStartsOnDemand() async throws {
        let processor = try makeProcessor { $0.spares = 0 }
        _ = try await processed(processor, try file("a.txt", Data("x\n".utf8)))
        try await Task.sleep(for: .milliseconds(500))
        XCTAssertEqual(processor.readySpares, [])
    }

    func testMoreSparesThanWorkersIsRefusedByValidation() {
        var settings = MediaSettings(workers: 2, spares: 3)
        XCTAssertNotNil(settings.validate())
        settings.spares = -1
        XCTAssertNotNil(settings.validate())
        settings.spares = 2
        XCTAssertNil(settings.validate())
    }
}
