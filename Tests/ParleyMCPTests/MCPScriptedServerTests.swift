import Foundation
import ParleyMCP
import ParleyPrimitives
import ParleyTestSupport
import ParleyUpstream
import XCTest

/// Parley's client against test_server.py's hand-written HTTP server, for what the SDK will not do on
/// demand: older protocol versions, paginated lists, a forgotten session, a refused `server/discover`.
final class MCPScriptedServerTests: XCTestCase {
    private let client = UpstreamClient()

    private func start(_ extra: [String], allowed: [String]? = nil, logs: LogLines) throws -> (PythonMCPServer, MCPServers, String) {
        let requestLog = temporaryPath("requests")
        let server = try PythonMCPServer("--scripted", extra: extra, environment: ["MCP_TEST_LOG": requestLog])
        let configuration = MCPConfiguration(servers: [
            MCPServerConfiguration(name: "old", transport: .http(url: server.url, headers: ["Authorization": "Bearer tok"]),
                                   allowedTools: allowed, timeout: .seconds(10))])
        let servers = MCPServers(configuration: configuration, client: client, settings: .forTests, log: logs.log)
        return (server, servers, requestLog)
    }

    private func requests(_ path: String) -> [JSON] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { JSON(parsing: String($0)) }
    }

    func testNegotiatesDownTo20250618AndFollowsNextCursor() async throws {
        let logs = LogLines()
        let (server, servers, requestLog) = try start(["--version", "2025-06-18"], logs: logs)
        defer { server.stop() }
        await servers.start()
        let entry = servers.entry("old")
        XCTAssertEqual(entry?.available, true, "\(logs.all)")
        XCTAssertEqual(entry?.tools.map(\.name), ["tool0", "tool1", "tool2", "tool3", "tool4", "tool5"])
        XCTAssertTrue(logs.contains("connected (protocol 2025-06-18, 6 tools)"), "\(logs.all)")
        let result = try await servers.call(server: "old", tool: "tool5", arguments: .object([:]))
        XCTAssertEqual(result.content, [.object(["type": .string("text"), "text": .string("called tool5")])])

        let seen = requests(requestLog)
        XCTAssertEqual(seen.map { $0["method"]?.stringValue ?? "" },
                       ["server/discover", "initialize", "notifications/initialized", "tools/list", "tools/list", "tools/list", "tools/call"])
        // After initialize: the session id and the negotiated version on every request.
        for request in seen.dropFirst(2) {
            XCTAssertEqual(request["session"], .string("session-1"))
            XCTAssertEqual(request["version"], .string("2025-06-18"))
        }
        XCTAssertEqual(seen[4]["params"]?["cursor"], .string("page-2"))
        // Ids: discover 1, initialize 2, three pages 3-5, the call 6 (its progress token).
        XCTAssertEqual(seen[6]["params"]?["_meta"]?["progressToken"], .integer(6))
        await servers.shutdown()
        // Shutdown ended the session with a DELETE.
        let deleted = await eventually(.seconds(5)) { self.requests(requestLog).contains { $0["delete"] == .string("session-1") } }
        XCTAssertTrue(deleted)
    }

    func testTheAllowListFiltersTools() async throws {
        let logs = LogLines()
        let (server, servers, _) = try start(["--version", "2025-03-26"], allowed: ["tool1", "tool4", "absent"], logs: logs)
        defer { server.stop() }
        await servers.start()
        XCTAssertEqual(servers.entry("old")?.tools.map(\.name), ["tool1", "tool4"])
        XCTAssertTrue(logs.contains("'tools' names 'absent', which the server does not list"), "\(logs.all)")
        do {
            _ = try await servers.call(server: "old", tool: "tool0", arguments: .object([:]))
            XCTFail("a tool outside the allow-list was called")
        } catch {
            XCTAssertEqual(error.kind, .unknownTool)
        }
        await servers.shutdown()
    }

    func testAnUnknownVersionMakesTheServerUnavailable() async throws {
        let logs = LogLines()
        let (server, servers, _) = try start(["--version", "2024-11-05"], logs: logs)
        defer { server.stop() }
        await servers.start()
        XCTAssertEqual(servers.entry("old")?.available, false)
        XCTAssertTrue(logs.contains("MCP server 'old': unavailable: the server speaks protocol version 2024-11-05; Parley speaks 2025-11-25, 2025-06-18, 2025-03-26, 2026-07-28"), "\(logs.all)")
        XCTAssertFalse(logs.all.joined().contains("Bearer tok"))
        await servers.shutdown()
    }

    func testAnExpiredSessionIsInitializedAgainOnce() async throws {
        let logs = LogLines()
        // Request 7 (the first call, after discover, initialize, initialized and three pages) gets 404.
        let (server, servers, requestLog) = try start(["--version", "2025-11-25", "--expire-after", "7"], logs: logs)
        defer { server.stop() }
        await servers.start()
        let result = try? await servers.call(server: "old", tool: "tool0", arguments: .object([:]))
        XCTAssertEqual(result?.content.first?["text"], .string("called tool0"), "\(logs.all) \(requests(requestLog))")
        XCTAssertTrue(logs.contains("the HTTP session expired; initializing again"), "\(logs.all)")
        let methods = requests(requestLog).map { $0["method"]?.stringValue ?? "" }
        XCTAssertEqual(Array(methods.suffix(5)), ["tools/call", "server/discover", "initialize", "notifications/initialized", "tools/call"])
        XCTAssertEqual(requests(requestLog).last?["session"], .string("session-2"))
        await servers.shutdown()
    }
}
