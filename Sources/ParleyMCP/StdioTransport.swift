import Foundation
import ParleyPrimitives
import Synchronization

/// MCP's stdio transport: the server is a child process reading newline-delimited JSON-RPC on stdin
/// and writing it on stdout. It gets only its configured environment plus Parley's PATH and HOME.
/// One instance is one child's life: a restart makes a new transport.
final class StdioTransport: MCPTransport {
    private let command: String
    private let arguments: [String]
    private let environment: [String: String]
    private let limits: MCPSettings
    private let child = Mutex<ChildProcess?>(nil)

    /// `parentEnvironment` gives PATH (to find `command`) and HOME, the only variables passed on.
    init(command: String, arguments: [String], environment: [String: String], parentEnvironment: [String: String],
         settings: MCPSettings) {
        self.command = command
        self.arguments = arguments
        var passed = environment
        for name in ["PATH", "HOME"] where passed[name] == nil {
            if let value = parentEnvironment[name] { passed[name] = value }
        }
        self.environment = passed
        self.limits = settings
    }

    var supportsStatelessProtocol: Bool { false }

    func open(events: AsyncStream<TransportEvent>.Continuation) async throws(TransportFailure) {
        guard let executable = Self.resolve(command, path: environment["PATH"] ?? "") else {
            throw .unavailable("'\(command)' was not found on PATH")
        }
        let limits = self.limits
        do {
            let process = try ChildProcess(
                executable: executable, arguments: arguments, environment: environment,
                maxLineBytes: limits.maxMessageBytes, stderrTailBytes: limits.stderrTailBytes,
                onLine: { line in
                    guard let line else {
                        events.yield(.malformed("skipped a line over \(limits.maxMessageBytes) bytes"))
                        return
                    }
                    guard let message = JSON(parsing: line) else {
                        events.yield(.malformed("skipped a stdout line that is not JSON"))
                        return
                    }
                    events.yield(.message(message))
                },
                onEnd: { status, stderr in
                    let tail = Self.lastLines(stderr, count: limits.stderrTailLines)
                    events.yield(.closed("the process exited (status \(status))" + (tail.isEmpty ? "" : "; its stderr ended with:\n\(tail)")))
                    events.finish()
                })
            child.withLock { $0 = process }
        } catch {
            throw .unavailable("'\(command)' could not be started: \(error)")
        }
    }

    func send(_ message: JSON, expecting id: JSON?, idleTimeout: Duration) async throws(TransportFailure) {
        guard let process = child.withLock({ $0 }) else { throw .unavailable("the process is not running") }
        if !(await process.write(Array((message.text + "\n").utf8))) { throw .unavailable("the process closed its stdin") }
    }

    func negotiated(version: String?) {}

    func close() async {
        guard let process = child.withLock({ $0 }) else { return }
        await process.stop(grace: limits.shutdownGrace)
    }

    /// `command` itself when it holds a `/`, else the first executable of that name on `path`.
    static func resolve(_ command: String, path: String) -> String? {
        if command.contains("/") { return FileManager.default.isExecutableFile(atPath: command) ? command : nil }
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(command)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// The last `count` lines of `bytes` as text (invalid UTF-8 replaced: this is only for the log).
    static func lastLines(_ bytes: [UInt8], count: Int) -> String {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        return lines.suffix(count + 1).joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
