import Foundation
import XCTest

/// The real `parley` executable in a child process, for what only a process can show: the
/// `listening on` line, signals, and `kill -9`.
final class ParleyProcess: @unchecked Sendable {
    let process = Process()
    let base: String

    static var executable: URL {
        TestParley.repositoryRoot.appendingPathComponent(".build/debug/parley")
    }

    init(environment: [String: String], arguments: [String] = []) throws {
        process.executableURL = Self.executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PARLEY_") }
            .merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = ""
        let deadline = Date().addingTimeInterval(20)
        while !line.contains("\n"), Date() < deadline {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            line += String(decoding: data, as: UTF8.self)
        }
        guard let first = line.split(separator: "\n").first, first.hasPrefix("listening on http://") else {
            process.terminate()
            throw XCTSkip("parley did not start: \(line)")
        }
        base = String(first.dropFirst("listening on ".count))
    }

    /// A test that fails half-way never leaves a server running.
    deinit {
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Sends `signal` and waits (bounded) for the exit; a process that does not exit in time is
    /// killed and the test fails, so a shutdown bug can never hang the suite.
    func kill(_ signal: Int32 = SIGKILL, timeout: TimeInterval = 10,
              file: StaticString = #filePath, line: UInt = #line) {
        Foundation.kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline {
            usleep(10_000)
        }
        if process.isRunning {
            XCTFail("parley did not exit within \(timeout) s of signal \(signal)", file: file, line: line)
            Foundation.kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }
}
