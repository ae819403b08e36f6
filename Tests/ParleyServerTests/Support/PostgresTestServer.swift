import Foundation
import ParleyTestSupport

/// A PostgreSQL server of one test's own (scripts/postgres-test-server.sh), to stop and start under a
/// running Parley.
final class PostgresTestServer: Sendable {
    let directory: URL
    let url: String
    private static let script = TestParley.repositoryRoot.appendingPathComponent("scripts/postgres-test-server.sh")

    init(directory: URL) throws {
        self.directory = directory
        try Self.run("start", directory)
        let named = try SpawnedProcess(executable: URL(fileURLWithPath: "/bin/bash"),
                                       arguments: [Self.script.path, "url", directory.path],
                                       environment: ProcessInfo.processInfo.environment)
        let output = String(decoding: named.standardOutput.readDataToEndOfFile(), as: UTF8.self)
        named.waitUntilExit()
        url = output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func start() throws { try Self.run("start", directory) }

    func stop() { try? Self.run("stop", directory) }

    /// The server's output goes nowhere: a daemon holding a pipe open would keep a reader waiting.
    private static func run(_ command: String, _ directory: URL) throws {
        let process = try SpawnedProcess(executable: URL(fileURLWithPath: "/bin/bash"),
                                         arguments: [script.path, command, directory.path],
                                         environment: ProcessInfo.processInfo.environment, captureOutput: false)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestParleyError.timedOut("scripts/postgres-test-server.sh \(command) failed (\(process.terminationStatus))")
        }
    }
}
