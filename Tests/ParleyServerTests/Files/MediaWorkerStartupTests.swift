import Foundation
import ParleyMedia
import ParleyServer
import XCTest

/// The `parley-media-worker` executable (issue 23: the server links no decoder, the worker is its own
/// binary): one that cannot be run stops the start with a message naming its path and the setting,
/// before any upload could fail on it; the default is the one beside the running binary.
final class MediaWorkerStartupTests: XCTestCase {
    private func startupError(worker: URL) throws -> String? {
        do {
            let parley = try TestParley { $0.media.workerExecutable = worker }
            let stopped = expectation(description: "stopped")
            Task { await parley.stop(); stopped.fulfill() }
            wait(for: [stopped], timeout: 30)
            return nil
        } catch let error as StartupError {
            return "\(error)"
        }
    }

    func testAWorkerThatCannotRunIsAStartupErrorNamingItsPath() throws {
        let directory = TestFiles.directory("parley-media-worker-missing")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let notExecutable = directory.appendingPathComponent("parley-media-worker")
        try Data("#!/bin/sh\n".utf8).write(to: notExecutable)
        let cases = [(directory.appendingPathComponent("nowhere/parley-media-worker"), "does not exist"),
                     (directory, "is a directory"), (notExecutable, "is not executable")]
        for (worker, why) in cases {
            let message = try XCTUnwrap(try startupError(worker: worker), "\(worker.path) must stop the start")
            XCTAssertTrue(message.contains(worker.path), "names the path: \(message)")
            XCTAssertTrue(message.contains(why), "says why (\(why)): \(message)")
            XCTAssertTrue(message.contains("PARLEY_MEDIA_WORKER"), "names the setting: \(message)")
            XCTAssertFalse(message.contains("\n"), "one line: \(message)")
        }
        XCTAssertNil(try startupError(worker: TestParley.mediaWorker), "the built worker starts")
    }

    func testTheExecutableExitsWithTheMessageAndFindsTheWorkerBesideItself() async throws {
        let directory = TestFiles.directory("parley-media-worker-process")
        let missing = directory.appendingPathComponent("parley-media-worker").path
        let settings = ["PARLEY_PORT": "0", "PARLEY_DB": directory.appendingPathComponent("parley.db").path,
                        "PARLEY_PUBLIC": TestParley.repositoryRoot.appendingPathComponent("Public").path]
        XCTAssertThrowsError(try ParleyProcess(environment: settings.merging(["PARLEY_MEDIA_WORKER": missing]) { $1 })) {
            XCTAssertTrue("\($0)".contains("exit status 2"), "\($0)")
            XCTAssertTrue("\($0)".contains("\(missing) does not exist"), "stderr names the path: \($0)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("parley.db").path),
                       "the check comes before the database is opened")
        // No setting: the `parley-media-worker` in the directory of `.build/debug/parley`.
        let parley = try ParleyProcess(environment: settings)
        parley.kill(SIGTERM)
        XCTAssertEqual(parley.process.terminationStatus, 0)
    }

    func testTheDefaultIsTheWorkerBesideTheRunningBinary() throws {
        let running = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        XCTAssertEqual(MediaSettings().workerExecutable,
                       running.deletingLastPathComponent().appendingPathComponent("parley-media-worker"))
        XCTAssertEqual(try ParleyConfiguration(environment: [:], arguments: []).media.workerExecutable,
                       MediaSettings.besideRunningExecutable)
        let set = try ParleyConfiguration(environment: ["PARLEY_MEDIA_WORKER": "/opt/parley/parley-media-worker"],
                                          arguments: [])
        XCTAssertEqual(set.media.workerExecutable.path, "/opt/parley/parley-media-worker")
        let flag = try ParleyConfiguration(environment: [:], arguments: ["--media-worker", "/usr/lib/parley/worker"])
        XCTAssertEqual(flag.media.workerExecutable.path, "/usr/lib/parley/worker", "the flag of the same name")
    }
}
