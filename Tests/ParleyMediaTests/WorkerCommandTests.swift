import Foundation
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
}
