import Foundation
import ParleyTestSupport
import Synchronization
import XCTest

/// The real `parley` executable in a child process, for what only a process can show: the
/// `listening on` line, signals, `kill -9` and what it logs. Standard output and standard error are
/// collected (`output`, `errors`) for the test to inspect and for the failure messages.
final class ParleyProcess: @unchecked Sendable {
    /// Set once in `init`, before the process is shared.
    private(set) var process: SpawnedProcess!
    let base: String
    private let collected = Collected()

    static var executable: URL {
        TestParley.repositoryRoot.appendingPathComponent(".build/debug/parley")
    }

    /// The environment a child `parley` gets: the test process's own without any `PARLEY_` setting,
    /// then `settings`.
    static func environment(_ settings: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PARLEY_") }.merging(settings) { $1 }
    }

    /// Everything the process wrote to standard output so far.
    var output: String { collected.output }
    /// Everything the process wrote to standard error so far (its log).
    var errors: String { collected.errors }

    /// Starts the process and waits (at most `startTimeout`) for its `listening on` line. A process
    /// that exits or stays silent is a failure, thrown with its standard error: a crash at start-up
    /// must fail the test, never skip it.
    init(environment: [String: String], arguments: [String] = [], startTimeout: TimeInterval = 20) throws {
        let process = try SpawnedProcess(executable: Self.executable, arguments: arguments,
                                       environment: Self.environment(environment))
        self.process = process
        let output = process.standardOutput
        let errors = process.standardError
        let collected = self.collected
        collected.read(output, errors: false)
        collected.read(errors, errors: true)

        let deadline = Date().addingTimeInterval(startTimeout)
        var line: Substring?
        while Date() < deadline {
            line = collected.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().first
            if line != nil || !process.isRunning { break }
            usleep(5_000)
        }
        guard let line, line.hasPrefix("listening on http://") else {
            let running = process.isRunning
            if running { Foundation.kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            collected.waitForEnd()
            throw StartFailure(description: "parley did not start "
                + (running ? "within \(startTimeout) s" : "(exit status \(process.terminationStatus))")
                + "; stdout: \(collected.output.debugDescription); stderr: \(collected.errors.debugDescription)")
        }
        base = String(line.dropFirst("listening on ".count))
    }

    struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// A test that fails half-way never leaves a server running.
    deinit {
        stop()
    }

    /// Kills the process if it still runs (never signals a pid that may have been reused).
    func stop() {
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }

    /// Sends `signal` and waits (bounded) for the exit; a process that does not exit in time is
    /// killed and the test fails, so a shutdown bug can never hang the suite.
    func kill(_ signal: Int32 = SIGKILL, timeout: TimeInterval = 10,
              file: StaticString = #filePath, line: UInt = #line) {
        guard process.isRunning else {
            XCTFail("parley had already exited (status \(process.terminationStatus)); stderr: \(errors)",
                    file: file, line: line)
            return
        }
        Foundation.kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline {
            usleep(10_000)
        }
        if process.isRunning {
            XCTFail("parley did not exit within \(timeout) s of signal \(signal); stderr: \(errors)",
                    file: file, line: line)
            Foundation.kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        // The pipes end with the process: everything it wrote is collected once the readers finish.
        collected.waitForEnd()
    }
}

/// Standard output and standard error of a child process, each read to its end on a thread of its
/// own (a full pipe would block the server). Thread-safe.
private final class Collected: Sendable {
    private let bytes = Mutex((output: [UInt8](), errors: [UInt8]()))
    private let readers = DispatchGroup()

    var output: String { bytes.withLock { String(decoding: $0.output, as: UTF8.self) } }
    var errors: String { bytes.withLock { String(decoding: $0.errors, as: UTF8.self) } }

    func read(_ handle: FileHandle, errors: Bool) {
        readers.enter()
        Thread.detachNewThread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                bytes.withLock {
                    if errors { $0.errors.append(contentsOf: data) } else { $0.output.append(contentsOf: data) }
                }
            }
            readers.leave()
        }
    }

    /// Waits (bounded) until both pipes reached their end, which they do when the process exits.
    func waitForEnd() {
        _ = readers.wait(timeout: .now() + 5)
    }
}

extension ParleyProcess {
    /// A JSON request to this process; the answer's body as a dictionary (empty when it is not one).
    func call(_ method: String, _ path: String, _ json: [String: Any]? = nil) async throws -> [String: Any] {
        let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) }
        let url = base + path
        let reply = try await Blocking.run {
            try TestHTTPClient().request(method, url, headers: [("Content-Type", "application/json")], body: body).body
        }
        return (try? JSONSerialization.jsonObject(with: Data(reply))) as? [String: Any] ?? [:]
    }
}
