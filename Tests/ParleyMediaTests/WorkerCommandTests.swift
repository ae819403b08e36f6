import Foundation
import ParleyMedia
import ParleyTestSupport
import XCTest

/// `parley-media-worker` run directly, as nothing but Parley should: without a valid request it
/// refuses on stdout as JSON and exits 1, before reading any file.
final class WorkerCommandTests: XCTestCase {
    func testTheWorkerRefusesAnythingButARequest() throws {
        let process = try SpawnedProcess(executable: MediaFixtures.worker, arguments: [],
                                         environment: ["PARLEY_PORT": "not a port"],
                                         standardInput: Data(#"{"input": "/etc/passwd"}"#.utf8))
        let reply = try process.standardOutput.readToEnd() ?? Data()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 1)
        let text = String(decoding: reply, as: UTF8.self)
        XCTAssertTrue(text.contains(#""error""#) && text.contains("no valid request"), text)
    }

    /// The server runs the worker beside itself: found through /proc/self/exe, or without /proc (a bare
    /// chroot, as `make docker-check` runs the image) through argv[0] or PATH.
    func testTheRunningBinaryIsFoundWithAndWithoutProc() throws {
        let running = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        XCTAssertEqual(MediaSettings.runningExecutable().path, running)
        XCTAssertEqual(MediaSettings.besideRunningExecutable.path,
                       URL(fileURLWithPath: running).deletingLastPathComponent().appendingPathComponent("parley-media-worker").path)
        XCTAssertEqual(MediaSettings.runningExecutable(procLink: "/nonexistent/exe", argument0: "/opt/parley/bin/parley",
                                                       searchPath: "").path, "/opt/parley/bin/parley")
        let directory = try MediaFixtures.directory(self)
        let binary = directory.appendingPathComponent("parley")
        try Data("#!/bin/sh\n".utf8).write(to: binary)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: binary.path)
        let found = MediaSettings.runningExecutable(procLink: "/nonexistent/exe", argument0: "parley",
                                                    searchPath: "/nonexistent::\(directory.path)")
        XCTAssertEqual(found.resolvingSymlinksInPath(), binary.resolvingSymlinksInPath())
    }
}
