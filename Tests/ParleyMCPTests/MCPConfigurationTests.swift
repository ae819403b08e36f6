import ParleyMCP
import XCTest

final class MCPConfigurationTests: XCTestCase {
    private func parse(_ text: String, _ environment: [String: String] = [:]) throws(MCPConfigurationError) -> MCPConfiguration {
        try MCPConfiguration.parse(Array(text.utf8), environment: environment)
    }

    /// The one line a bad file gives.
    private func refusal(_ text: String, _ environment: [String: String] = [:]) -> String {
        do {
            _ = try parse(text, environment)
            return "accepted"
        } catch {
            XCTAssertFalse(error.description.contains("\n"), "one line: \(error)")
            return error.description
        }
    }

    func testTheIssuesExampleIsReadWithDefaultsAndVariables() throws {
        let configuration = try parse("""
            {"mcpServers": {"docs": {"url": "http://127.0.0.1:9000/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}},
             "time": {"command": "python3", "args": ["-m", "mcp_server_time"], "env": {"LOG": "warn"}},
             "calc": {"url": "http://127.0.0.1:9001/mcp", "approval": "never", "tools": ["add","mul"], "timeout": 2.5, "members": false}}}
            """, ["DOCS_TOKEN": "s3cret"])
        XCTAssertEqual(configuration.servers.map(\.name), ["calc", "docs", "time"])
        let calc = configuration.servers[0], docs = configuration.servers[1], time = configuration.servers[2]
        XCTAssertEqual(calc.approval, .never)
        XCTAssertEqual(calc.allowedTools, ["add", "mul"])
        XCTAssertEqual(calc.timeout, .milliseconds(2500))
        XCTAssertFalse(calc.membersAllowed)
        XCTAssertEqual(docs.transport, .http(url: "http://127.0.0.1:9000/mcp", headers: ["Authorization": "Bearer s3cret"]))
        XCTAssertEqual(docs.approval, .auto)
        XCTAssertEqual(docs.timeout, .seconds(120))
        XCTAssertTrue(docs.membersAllowed)
        XCTAssertNil(docs.allowedTools)
        XCTAssertEqual(time.transport, .stdio(command: "python3", arguments: ["-m", "mcp_server_time"], environment: ["LOG": "warn"]))
    }

    func testVSCodesServersKeyAndTypeAreAccepted() throws {
        let configuration = try parse("""
            {"servers": {"a": {"type": "http", "url": "https://example.com/mcp"}, "b": {"type": "stdio", "command": "/bin/true"}}}
            """)
        XCTAssertEqual(configuration.servers.map(\.name), ["a", "b"])
    }

    func testAnEmptyFileObjectMeansNoServers() throws {
        XCTAssertEqual(try parse("{}").servers, [])
    }

    func testEachBadFieldNamesItsServerAndField() {
        let cases: [(String, String)] = [
            (#"{"docs": {"url": "http://h/mcp", "timeout": 0}}"#, "server 'docs': 'timeout' must be a positive number of seconds"),
            (#"{"docs": {"url": "http://h/mcp", "timeout": "5"}}"#, "server 'docs': 'timeout'"),
            (#"{"docs": {"url": "http://h/mcp", "approval": "sometimes"}}"#, "server 'docs': 'approval' must be"),
            (#"{"docs": {"url": "http://h/mcp", "members": "yes"}}"#, "server 'docs': 'members' must be true or false"),
            (#"{"docs": {"url": "http://h/mcp", "tools": "add"}}"#, "server 'docs': 'tools' must be an array"),
            (#"{"docs": {"url": "http://h/mcp", "tools": ["add", 3]}}"#, "server 'docs': 'tools'"),
            (#"{"docs": {"url": "ftp://h/mcp"}}"#, "server 'docs': 'url' must be an http:// or https:// URL"),
            (#"{"docs": {"url": "http://h/mcp", "headers": {"Bad Name": "x"}}}"#, "server 'docs': 'headers.Bad Name' is not a valid header name"),
            (#"{"docs": {"url": "http://h/mcp", "headers": {"X": 1}}}"#, "server 'docs': 'headers.X' must be a string"),
            (#"{"docs": {"url": "http://h/mcp", "args": []}}"#, "server 'docs': 'args' is for 'command' servers"),
            (#"{"docs": {"url": "http://h/mcp", "command": "x"}}"#, "server 'docs': has both 'url' and 'command'"),
            (#"{"docs": {}}"#, "server 'docs': needs 'url' (Streamable HTTP) or 'command' (stdio)"),
            (#"{"docs": {"command": ""}}"#, "server 'docs': 'command' must be a non-empty string"),
            (#"{"docs": {"command": "x", "args": ["a", 2]}}"#, "server 'docs': 'args[1]' must be a string"),
            (#"{"docs": {"command": "x", "env": {"A": 1}}}"#, "server 'docs': 'env.A' must be a string"),
            (#"{"docs": {"command": "x", "headers": {}}}"#, "server 'docs': 'headers' is for 'url' servers"),
            (#"{"docs": {"command": "x", "type": "sse"}}"#, "server 'docs': 'type' must be \"stdio\""),
            (#"{"docs": {"url": "http://h/mcp", "type": "sse"}}"#, "server 'docs': 'type' must be \"http\""),
            (#"{"docs": {"url": "http://h/mcp", "disabled": true}}"#, "server 'docs': 'disabled' is not a known key"),
            (#"{"docs": "http://h/mcp"}"#, "server 'docs': must be an object"),
            (#"{"parley": {"url": "http://h/mcp"}}"#, "server 'parley': the name 'parley' is reserved"),
            (#"{"my docs": {"url": "http://h/mcp"}}"#, "server 'my docs': the name must be letters, digits"),
            (#"{"": {"url": "http://h/mcp"}}"#, "server '': the name must be"),
            (#"{"dø": {"url": "http://h/mcp"}}"#, "server 'dø': the name must be"),
        ]
        for (servers, expected) in cases {
            let line = refusal(#"{"mcpServers": \#(servers)}"#)
            XCTAssertTrue(line.hasPrefix("PARLEY_MCP_CONFIG: "), line)
            XCTAssertTrue(line.contains(expected), "\(servers): \(line)")
        }
    }

    func testFileLevelFaults() {
        XCTAssertEqual(refusal("not json"), "PARLEY_MCP_CONFIG: the file is not valid JSON")
        XCTAssertEqual(refusal("[]"), "PARLEY_MCP_CONFIG: the file must hold a JSON object")
        XCTAssertTrue(refusal(#"{"mcpServers": {}, "inputs": []}"#).contains("'inputs' is not a known key"))
        XCTAssertTrue(refusal(#"{"mcpServers": []}"#).contains("'mcpServers' must be an object"))
        XCTAssertTrue(refusal(#"{"mcpServers": {}, "servers": {}}"#).contains("both"))
    }

    func testAnUndefinedVariableNamesServerAndFieldButNoValue() {
        let line = refusal(#"{"mcpServers": {"docs": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}", "X-Other": "${SET}"}}}}"#,
                           ["SET": "visible-secret"])
        XCTAssertEqual(line, "PARLEY_MCP_CONFIG: server 'docs': 'headers.Authorization' uses ${DOCS_TOKEN}, which is not set in the environment")
        let env = refusal(#"{"mcpServers": {"time": {"command": "x", "env": {"KEY": "${MISSING}"}}}}"#)
        XCTAssertTrue(env.contains("server 'time': 'env.KEY' uses ${MISSING}"), env)
        let unclosed = refusal(#"{"mcpServers": {"time": {"command": "x", "env": {"KEY": "${OPEN"}}}}"#)
        XCTAssertTrue(unclosed.contains("'env.KEY' has '${' without a closing '}'"), unclosed)
    }

    func testVariablesAreExpandedInUrlEnvAndArgsButADollarAloneStays() throws {
        let configuration = try parse("""
            {"mcpServers": {"a": {"url": "http://${HOST}/mcp"}, "b": {"command": "x", "args": ["${env:ARG}", "$5"], "env": {"K": "${V}-${V}"}}}}
            """, ["HOST": "127.0.0.1:9", "ARG": "one", "V": "v"])
        XCTAssertEqual(configuration.servers[0].transport, .http(url: "http://127.0.0.1:9/mcp", headers: [:]))
        XCTAssertEqual(configuration.servers[1].transport, .stdio(command: "x", arguments: ["one", "$5"], environment: ["K": "v-v"]))
    }

    func testSecretsNeverAppearInErrors() {
        let line = refusal(#"{"mcpServers": {"docs": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${T}\r\nX: y"}}}}"#,
                           ["T": "TOPSECRET"])
        XCTAssertTrue(line.contains("'headers.Authorization' must not contain line breaks"), line)
        XCTAssertFalse(line.contains("TOPSECRET"))
    }

    func testLoadNamesAnUnreadableFile() {
        XCTAssertThrowsError(try MCPConfiguration.load(path: "/nonexistent/mcp.json", environment: [:])) { error in
            XCTAssertEqual("\(error)", "PARLEY_MCP_CONFIG: the file /nonexistent/mcp.json cannot be read")
        }
    }
}
