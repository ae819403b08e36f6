import Foundation
import ParleyMCP
import ParleyPrimitives
import ParleyTestSupport
import ParleyUpstream
import XCTest

/// Parley's client against the official Python SDK's server (Tests/mcp/test_server.py), over
/// Streamable HTTP (2026-07-28 single exchanges, and the 2025-11-25 handshake) and over stdio.
final class MCPSDKServerTests: XCTestCase {
    private let client = UpstreamClient()

    private func servers(_ name: String, _ transport: MCPServerConfiguration.Transport, timeout: Duration = .seconds(30),
                         stateless: Bool = true, logs: LogLines) -> MCPServers {
        var settings = MCPSettings.forTests
        settings.offerStatelessProtocol = stateless
        let configuration = MCPConfiguration(servers: [MCPServerConfiguration(name: name, transport: transport, timeout: timeout)])
        return MCPServers(configuration: configuration, client: client, settings: settings,
                          environment: ProcessInfo.processInfo.environment, log: logs.log)
    }

    private func stdio(_ environment: [String: String] = [:]) throws -> MCPServerConfiguration.Transport {
        .stdio(command: try MCPTestPython.python(), arguments: [MCPTestPython.script, "--stdio"], environment: environment)
    }

    // MARK: - Lists and results

    private func checkToolsAndResults(_ servers: MCPServers, _ name: String) async throws {
        let entry = try XCTUnwrap(servers.entry(name))
        XCTAssertTrue(entry.available)
        let tools = Dictionary(uniqueKeysWithValues: entry.tools.map { ($0.name, $0) })
        XCTAssertEqual(Set(tools.keys), ["lookup", "delete_item", "fail", "stats", "slow", "image", "grow", "crash"])
        XCTAssertEqual(tools["lookup"]?.readOnlyHint, true)
        XCTAssertEqual(tools["lookup"]?.description, "Looks a key up.")
        XCTAssertEqual(tools["lookup"]?.inputSchema["required"], .array([.string("key")]))
        XCTAssertEqual(tools["delete_item"]?.destructiveHint, true)
        XCTAssertNil(tools["fail"]?.readOnlyHint)
        XCTAssertEqual(tools["stats"]?.outputSchema?["properties"]?["count"]?["type"], .string("integer"))

        let text = try await servers.call(server: name, tool: "lookup", arguments: .object(["key": .string("k")]))
        XCTAssertEqual(text.content.first?["type"], .string("text"))
        XCTAssertEqual(text.content.first?["text"], .string("value of k"))
        XCTAssertFalse(text.isError)

        let failed = try await servers.call(server: name, tool: "fail", arguments: .object([:]))
        XCTAssertTrue(failed.isError)
        XCTAssertTrue(failed.content.first?["text"]?.stringValue?.contains("always fails") == true, "\(failed)")

        let stats = try await servers.call(server: name, tool: "stats", arguments: .null)
        XCTAssertEqual(stats.structuredContent, .object(["count": .integer(3), "mean": .number(1.5)]))

        let image = try await servers.call(server: name, tool: "image", arguments: .object([:]))
        XCTAssertEqual(image.content.first?["type"], .string("image"))
        XCTAssertEqual(image.content.first?["mimeType"], .string("image/png"))
        XCTAssertEqual(image.content.first?["data"]?.stringValue?.hasPrefix("iVBORw0KGgo"), true)

        do {
            _ = try await servers.call(server: name, tool: "nope", arguments: .object([:]))
            XCTFail("an unlisted tool was called")
        } catch {
            XCTAssertEqual(error.kind, .unknownTool)
        }
        do {
            _ = try await servers.call(server: "other", tool: "lookup", arguments: .object([:]))
            XCTFail("an unknown server was called")
        } catch {
            XCTAssertEqual(error.kind, .unknownServer)
        }
    }

    func testHTTPStatelessProtocol() async throws {
        let server = try PythonMCPServer()
        defer { server.stop() }
        let logs = LogLines()
        let servers = servers("sdk", .http(url: server.url, headers: ["X-Test": "header-secret"]), logs: logs)
        await servers.start()
        try await checkToolsAndResults(servers, "sdk")
        XCTAssertTrue(logs.contains("MCP server 'sdk': connected (protocol 2026-07-28"), "\(logs.all)")
        XCTAssertFalse(logs.all.joined().contains("header-secret"))
        await servers.shutdown()
    }

    func testHTTPHandshakeProtocol() async throws {
        let server = try PythonMCPServer()
        defer { server.stop() }
        let logs = LogLines()
        let servers = servers("sdk", .http(url: server.url, headers: [:]), stateless: false, logs: logs)
        await servers.start()
        try await checkToolsAndResults(servers, "sdk")
        XCTAssertTrue(logs.contains("connected (protocol 2025-11-25"), "\(logs.all)")
        await servers.shutdown()
    }

    func testStdio() async throws {
        let logs = LogLines()
        let servers = servers("local", try stdio(), logs: logs)
        await servers.start()
        try await checkToolsAndResults(servers, "local")
        XCTAssertTrue(logs.contains("connected (protocol 2025-11-25"), "\(logs.all)")
        await servers.shutdown()
    }

    // MARK: - Progress, timeout, cancellation

    private func checkProgressTimeoutAndCancel(_ servers: MCPServers, _ name: String, cancelFile: String) async throws {
        // Progress every 0.2 s keeps a 2 s call alive under a 1 s timeout.
        let progress = LogLines()
        let done = try await servers.call(server: name, tool: "slow", arguments: .object(["seconds": .number(2)]),
                                          onProgress: { progress.log("progress") })
        XCTAssertEqual(done.content.first?["text"], .string("slept 2.0"))
        XCTAssertGreaterThanOrEqual(progress.all.count, 5)

        // Quiet for longer than the timeout: a timeout, and the server is told to stop.
        let started = ContinuousClock.now
        do {
            _ = try await servers.call(server: name, tool: "slow", arguments: .object(["seconds": .number(4), "quiet": .bool(true)]))
            XCTFail("no timeout")
        } catch {
            XCTAssertEqual(error.kind, .timeout, error.message)
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(3))
        let timedOutSeen = await eventually { (try? String(contentsOfFile: cancelFile, encoding: .utf8))?.contains("cancelled 4.0") == true }
        XCTAssertTrue(timedOutSeen, "the server never saw the timed-out call cancelled")

        // Task cancellation: the caller is told at once and the server sees the cancel.
        let call = Task { try await servers.call(server: name, tool: "slow", arguments: .object(["seconds": .number(9)])) }
        try await Task.sleep(for: .milliseconds(500))
        call.cancel()
        do {
            _ = try await call.value
            XCTFail("the cancelled call returned")
        } catch let error as MCPCallError {
            XCTAssertEqual(error.kind, .cancelled)
        }
        let cancelSeen = await eventually { (try? String(contentsOfFile: cancelFile, encoding: .utf8))?.contains("cancelled 9.0") == true }
        XCTAssertTrue(cancelSeen, "the server never saw the cancellation")
        // The connection is still good.
        let after = try await servers.call(server: name, tool: "lookup", arguments: .object(["key": .string("x")]))
        XCTAssertEqual(after.content.first?["text"], .string("value of x"))
    }

    func testHTTPStatelessProgressTimeoutAndCancellation() async throws {
        let cancelFile = temporaryPath("cancel")
        let server = try PythonMCPServer(environment: ["MCP_TEST_CANCEL_FILE": cancelFile])
        defer { server.stop() }
        let servers = servers("sdk", .http(url: server.url, headers: [:]), timeout: .seconds(1), logs: LogLines())
        await servers.start()
        try await checkProgressTimeoutAndCancel(servers, "sdk", cancelFile: cancelFile)
        await servers.shutdown()
    }

    func testHTTPHandshakeProgressTimeoutAndCancellation() async throws {
        let cancelFile = temporaryPath("cancel")
        let server = try PythonMCPServer(environment: ["MCP_TEST_CANCEL_FILE": cancelFile])
        defer { server.stop() }
        let servers = servers("sdk", .http(url: server.url, headers: [:]), timeout: .seconds(1), stateless: false, logs: LogLines())
        await servers.start()
        try await checkProgressTimeoutAndCancel(servers, "sdk", cancelFile: cancelFile)
        await servers.shutdown()
    }

    func testStdioProgressTimeoutAndCancellationWithTheConfiguredEnvironment() async throws {
        let cancelFile = temporaryPath("cancel")
        let servers = servers("local", try stdio(["MCP_TEST_CANCEL_FILE": cancelFile]), timeout: .seconds(1), logs: LogLines())
        await servers.start()
        try await checkProgressTimeoutAndCancel(servers, "local", cancelFile: cancelFile)
        await servers.shutdown()
    }

    // MARK: - Life

    func testAnHTTPServerDownAtStartBecomesAvailable() async throws {
        let port = LoopbackPort.free()
        let logs = LogLines()
        let servers = servers("late", .http(url: "http://127.0.0.1:\(port)/mcp", headers: [:]), logs: logs)
        await servers.start()
        let down = servers.entry("late")
        XCTAssertEqual(down?.available, false)
        XCTAssertEqual(down?.tools, [])
        XCTAssertTrue(logs.contains("MCP server 'late': unavailable"), "\(logs.all)")
        let version = servers.toolsVersion
        let server = try PythonMCPServer(port: port)
        defer { server.stop() }
        let up = await eventually { servers.entry("late")?.available == true }
        XCTAssertTrue(up, "\(logs.all)")
        XCTAssertGreaterThan(servers.toolsVersion, version)
        XCTAssertEqual(servers.entry("late")?.tools.count, 8)
        await servers.shutdown()
    }

    func testACrashedStdioServerIsRestartedAndItsStderrLogged() async throws {
        let logs = LogLines()
        let servers = servers("local", try stdio(), logs: logs)
        await servers.start()
        do {
            _ = try await servers.call(server: "local", tool: "crash", arguments: .object([:]))
            XCTFail("the crash answered")
        } catch {
            XCTAssertEqual(error.kind, .serverUnavailable, error.message)
        }
        XCTAssertTrue(logs.contains("crashing on purpose"), "\(logs.all)")
        XCTAssertTrue(logs.contains("status 3"), "\(logs.all)")
        XCTAssertEqual(servers.entry("local")?.tools.count, 8, "an unavailable server keeps its last list")
        let back = await eventually { servers.entry("local")?.available == true }
        XCTAssertTrue(back, "\(logs.all)")
        let result = try await servers.call(server: "local", tool: "lookup", arguments: .object(["key": .string("again")]))
        XCTAssertEqual(result.content.first?["text"], .string("value of again"))
        await servers.shutdown()
    }

    func testListChangedRefreshesTheToolsOverStdio() async throws {
        let servers = servers("local", try stdio(), logs: LogLines())
        await servers.start()
        _ = try await servers.call(server: "local", tool: "grow", arguments: .object([:]))
        let grown = await eventually { servers.entry("local")?.tools.contains { $0.name == "grown" } == true }
        XCTAssertTrue(grown)
        let result = try await servers.call(server: "local", tool: "grown", arguments: .object([:]))
        XCTAssertEqual(result.content.first?["text"], .string("grown"))
        await servers.shutdown()
    }

    func testShutdownStopsTheStdioChild() async throws {
        let marker = UUID().uuidString
        let servers = servers("local", try stdio(["MCP_TEST_MARKER": marker]), logs: LogLines())
        await servers.start()
        XCTAssertEqual(processes(withMarker: marker).count, 1)
        await servers.shutdown()
        XCTAssertEqual(processes(withMarker: marker), [])
        do {
            _ = try await servers.call(server: "local", tool: "lookup", arguments: .object(["key": .string("k")]))
            XCTFail("a call after shutdown")
        } catch {
            XCTAssertEqual(error.kind, .serverUnavailable)
        }
    }

    func testAMissingCommandIsUnavailableWithAClearLine() async throws {
        let logs = LogLines()
        let servers = servers("ghost", .stdio(command: "parley-no-such-command", arguments: [], environment: [:]), logs: logs)
        await servers.start()
        XCTAssertEqual(servers.entry("ghost")?.available, false)
        XCTAssertTrue(logs.contains("MCP server 'ghost': unavailable: 'parley-no-such-command' was not found on PATH"), "\(logs.all)")
        await servers.shutdown()
    }

    /// Process ids whose environment holds MCP_TEST_MARKER=marker.
    private func processes(withMarker marker: String) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { entry in
            guard Int(entry) != nil, let data = FileManager.default.contents(atPath: "/proc/\(entry)/environ") else { return false }
            return data.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == "MCP_TEST_MARKER=\(marker)" }
        }
    }
}
