import Foundation
import ParleyMCP
import ParleyPrimitives
import ParleyTestSupport
import ParleyUpstream
import Synchronization
import XCTest

/// The Python side of the MCP tests: Tests/mcp/test_server.py run by the venv `make test` makes
/// (`.build/mcp-venv`, or PARLEY_MCP_PYTHON). A missing venv fails the test: it never skips.
enum MCPTestPython {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let script = repositoryRoot.appendingPathComponent("Tests/mcp/test_server.py").path

    static func python() throws -> String {
        let path = ProcessInfo.processInfo.environment["PARLEY_MCP_PYTHON"]
            ?? repositoryRoot.appendingPathComponent(".build/mcp-venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw MCPTestFailure("no Python with the `mcp` package at \(path): run `python3 -m venv .build/mcp-venv && .build/mcp-venv/bin/pip install mcp` (make test does), or set PARLEY_MCP_PYTHON")
        }
        return path
    }
}

struct MCPTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// test_server.py running as an HTTP server on a free port; `stop()` (or deinit) ends it.
final class PythonMCPServer: Sendable {
    let port: Int
    private let process: Mutex<SpawnedProcess?>

    var url: String { "http://127.0.0.1:\(port)/mcp" }

    /// `mode` is "--http" or "--scripted"; waits until the port accepts connections.
    init(_ mode: String = "--http", port: Int? = nil, extra: [String] = [], environment: [String: String] = [:],
         waitUntilUp: Bool = true) throws {
        let port = port ?? LoopbackPort.free()
        self.port = port
        let process = try SpawnedProcess(executable: URL(fileURLWithPath: try MCPTestPython.python()),
                                         arguments: [MCPTestPython.script, mode, String(port)] + extra,
                                         environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                         captureOutput: false)
        self.process = Mutex(process)
        guard waitUntilUp else { return }
        let deadline = Deadline(.seconds(30))
        while !LoopbackPort.accepts(port) {
            guard !deadline.hasPassed, process.isRunning else {
                stop()
                throw MCPTestFailure("test_server.py \(mode) did not listen on port \(port) within 30 s")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    func stop() {
        guard let process = self.process.withLock({ state -> SpawnedProcess? in defer { state = nil }; return state }) else { return }
        // SIGKILL: a test run may pass SIGTERM on as ignored (an ignored disposition survives exec).
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// Collects the client's log lines for assertions.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    var log: @Sendable (String) -> Void { { [self] line in self.lines.withLock { $0.append(line) } } }
    var all: [String] { lines.withLock { $0 } }

    func contains(_ text: String) -> Bool { all.contains { $0.contains(text) } }
}

extension MCPSettings {
    /// Short waits, so a test about reconnection takes a second, not a minute.
    static var forTests: MCPSettings {
        var settings = MCPSettings()
        settings.handshakeTimeout = .seconds(15)
        settings.restartBackoffInitial = .milliseconds(200)
        settings.restartBackoffMax = .seconds(1)
        settings.shutdownGrace = .seconds(1)
        return settings
    }
}

/// A temporary file path (not created).
func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("parley-mcp-\(UUID().uuidString)-\(name)").path
}

/// Polls `condition` (async) until it holds or `limit` passes.
func eventually(_ limit: Duration = .seconds(20), _ condition: () async -> Bool) async -> Bool {
    await Deadline(limit).wait(every: .milliseconds(20)) { await condition() }
}

extension MCPServers {
    nonisolated func entry(_ server: String) -> MCPServerTools? { tools().first { $0.server == server } }
}
