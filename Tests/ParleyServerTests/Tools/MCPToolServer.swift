import Foundation
import ParleyTestSupport
import XCTest

/// The real MCP test server (Tests/mcp/test_server.py, the official Python SDK) as Parley's tool servers:
/// `test` (approval `auto`: `lookup` runs at once, `delete_item` asks) and `free` (approval `never`), both over
/// stdio, started by Parley from the file `PARLEY_MCP_CONFIG` names; with `adminOnly`, also `staff`
/// (`members: false`).
struct MCPToolServer {
    /// Where the server writes "cancelled <seconds>" when a `slow` call is cancelled.
    let cancelFile: String
    /// The `PARLEY_MCP_CONFIG` setting.
    let settings: [String: String]

    init(directory: URL, adminOnly: Bool = false) throws {
        let python = try Self.python()
        let script = TestParley.repositoryRoot.appendingPathComponent("Tests/mcp/test_server.py").path
        cancelFile = directory.appendingPathComponent("cancelled.txt").path
        let server: [String: Any] = ["command": python, "args": [script, "--stdio"],
                                     "env": ["MCP_TEST_CANCEL_FILE": cancelFile]]
        var free = server
        free["approval"] = "never"
        let file = directory.appendingPathComponent("mcp.json")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var servers = ["test": server, "free": free]
        if adminOnly {
            var staff = free
            staff["members"] = false
            servers["staff"] = staff
        }
        try JSONSerialization.data(withJSONObject: ["mcpServers": servers]).write(to: file)
        settings = ["PARLEY_MCP_CONFIG": file.path]
    }

    /// The venv's python (`make test` makes it and sets PARLEY_MCP_PYTHON); a missing venv fails the test.
    static func python() throws -> String {
        let path = ProcessInfo.processInfo.environment["PARLEY_MCP_PYTHON"]
            ?? TestParley.repositoryRoot.appendingPathComponent(".build/mcp-venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            XCTFail("no MCP venv at \(path): run `make test` (it makes .build/mcp-venv with the `mcp` package)")
            throw TestParleyError.timedOut("no MCP venv")
        }
        return path
    }

    /// Waits until the servers' tools are listed as available.
    static func ready(_ parley: TestParley, as auth: [(String, String)] = [], servers: Set<String> = ["test", "free"],
                      timeout: Duration = .seconds(30)) async throws {
        let ready = try await Deadline(timeout).wait(every: .milliseconds(50)) {
            let items = try await parley.call("GET", "/api/tools", headers: auth).json["items"] as? [[String: Any]] ?? []
            let available = Set(items.filter { $0["available"] as? Bool == true }.compactMap { $0["server"] as? String })
            return available.isSuperset(of: servers)
        }
        guard ready else { throw TestParleyError.timedOut("the MCP servers did not come up") }
    }
}
