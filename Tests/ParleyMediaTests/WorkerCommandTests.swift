import Foundation
import XCTest

/// `parley media-worker` run directly, as nothing but Parley should: without a valid request it
/// refuses on stdout as JSON and exits 1, before reading any file.
final class WorkerCommandTests: XCTestCase {
    func testTheWorkerRefusesAnythingButARequest() throws {
        let process = Process()
        process.executableURL = MediaFixtures.parley
        process.arguments = ["media-worker"]
        process.environment = ["PARLEY_PORT": "not a port"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data(#"{"input": "/etc/passwd"}"#.utf8))
        try input.fileHandleForWriting.close()
        let reply = try output.fileHandleForReading.readToEnd() ?? Data()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 1)
        let text = String(decoding: reply, as: UTF8.self)
        XCTAssertTrue(text.contains(#""error""#) && text.contains("no valid request"), text)
    }
}
