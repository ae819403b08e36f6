import Foundation
import ParleyPrimitives

/// The MCP servers Parley may call, parsed from the file named by `PARLEY_MCP_CONFIG` (the format of
/// Claude Desktop, Cursor and VS Code: `{"mcpServers": {"name": {...}}}`, or `"servers"` as VS Code
/// writes it). Parsed whole at start so a bad file refuses to start with one line naming the server and
/// the field, instead of failing later on the first call.
public struct MCPConfiguration: Sendable, Equatable {
    /// The configured servers, sorted by name.
    public var servers: [MCPServerConfiguration]

    public init(servers: [MCPServerConfiguration]) {
        self.servers = servers.sorted { $0.name < $1.name }
    }

    /// Reads and parses the file at `path`; `${VAR}` is taken from `environment`.
    public static func load(path: String, environment: [String: String]) throws(MCPConfigurationError) -> MCPConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw MCPConfigurationError(reason: "the file \(path) cannot be read")
        }
        return try parse(Array(data), environment: environment)
    }

    /// Parses the file's bytes; `${VAR}` is taken from `environment`.
    public static func parse(_ bytes: [UInt8], environment: [String: String]) throws(MCPConfigurationError) -> MCPConfiguration {
        try MCPConfigurationParser(environment: environment).parse(bytes)
    }
}

/// One configured MCP server: how to reach it and what Parley lets people do with it.
public struct MCPServerConfiguration: Sendable, Equatable {
    /// How the server is reached.
    public enum Transport: Sendable, Equatable {
        /// Streamable HTTP: JSON-RPC POSTed to `url`. Header values may be secrets: never logged.
        case http(url: String, headers: [String: String])
        /// A child process speaking newline-delimited JSON-RPC on stdin/stdout. It gets only
        /// `environment` plus Parley's PATH and HOME. Environment values may be secrets: never logged.
        case stdio(command: String, arguments: [String], environment: [String: String])
    }

    /// `[A-Za-z0-9_-]+`, not `parley`: the prefix of its tools' ids (`server/tool`).
    public var name: String
    public var transport: Transport
    /// `"tools"`: only these tools are offered (nil: all the server lists).
    public var allowedTools: [String]?
    /// `"approval"`: whether a person approves each call (default `.auto`).
    public var approval: MCPApproval
    /// `"timeout"`: how long one call may go without an answer or a progress notification (default 120 s).
    public var timeout: Duration
    /// `"members"`: false means only admins may use this server's tools (default true).
    public var membersAllowed: Bool

    /// The default `timeout` (120 s).
    public static let defaultTimeout: Duration = .seconds(120)

    public init(name: String, transport: Transport, allowedTools: [String]? = nil, approval: MCPApproval = .auto,
                timeout: Duration = MCPServerConfiguration.defaultTimeout, membersAllowed: Bool = true) {
        self.name = name
        self.transport = transport
        self.allowedTools = allowedTools
        self.approval = approval
        self.timeout = timeout
        self.membersAllowed = membersAllowed
    }
}

/// Whether a person must approve a call before it runs. The policy is the caller's (ParleyTools);
/// this module only reads it from the file.
public enum MCPApproval: String, Sendable, Equatable, CaseIterable {
    /// Every call is approved first.
    case always
    /// Calls run without asking.
    case never
    /// Ask unless the tool says it is read-only (`readOnlyHint`).
    case auto
}

/// Why the MCP configuration was refused: one line naming the server and the field, never a secret
/// (a header or environment value), e.g.
/// `PARLEY_MCP_CONFIG: server 'docs': 'timeout' must be a positive number of seconds`.
public struct MCPConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server's name, when the fault is inside one server's entry.
    public var server: String?
    /// The field (`timeout`, `headers.Authorization`), when the fault is one field's.
    public var field: String?
    /// What is wrong, without the field's value.
    public var reason: String

    public init(server: String? = nil, field: String? = nil, reason: String) {
        self.server = server
        self.field = field
        self.reason = reason
    }

    public var description: String {
        var line = "PARLEY_MCP_CONFIG: "
        if let server { line += "server '\(server)': " }
        if let field { line += "'\(field)' " }
        return line + reason
    }
}
