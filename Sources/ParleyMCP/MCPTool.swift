import ParleyPrimitives

/// A tool an MCP server offers, as its last `tools/list` described it. The schema is the server's,
/// carried unchanged for the model; the hints are the server's claims, to inform approval, not to trust.
public struct MCPTool: Sendable, Equatable {
    /// The configured server's name (the tool id is `server/name`).
    public var server: String
    public var name: String
    public var title: String?
    public var description: String?
    /// The JSON Schema of the arguments (an object schema; `{"type":"object"}` when the server gave none).
    public var inputSchema: JSON
    /// The JSON Schema of `structuredContent`, when the server declares one.
    public var outputSchema: JSON?
    /// `annotations.readOnlyHint`: the tool says it changes nothing.
    public var readOnlyHint: Bool?
    /// `annotations.destructiveHint`: the tool says it may destroy or overwrite.
    public var destructiveHint: Bool?

    public init(server: String, name: String, title: String? = nil, description: String? = nil,
                inputSchema: JSON = .object(["type": .string("object")]), outputSchema: JSON? = nil,
                readOnlyHint: Bool? = nil, destructiveHint: Bool? = nil) {
        self.server = server
        self.name = name
        self.title = title
        self.description = description
        self.inputSchema = inputSchema
        self.outputSchema = outputSchema
        self.readOnlyHint = readOnlyHint
        self.destructiveHint = destructiveHint
    }
}

/// What a `tools/call` returned. A tool that failed in its own terms (`isError`) is a result, not an
/// `MCPCallError`: the model is meant to read it.
public struct MCPToolResult: Sendable, Equatable {
    /// The MCP content items as the server gave them (`text`, `image` {data, mimeType}, `audio`,
    /// `resource_link`, `resource`).
    public var content: [JSON]
    public var structuredContent: JSON?
    public var isError: Bool

    public init(content: [JSON], structuredContent: JSON? = nil, isError: Bool = false) {
        self.content = content
        self.structuredContent = structuredContent
        self.isError = isError
    }
}

/// One configured server's state as `MCPServers.tools()` reports it.
public struct MCPServerTools: Sendable, Equatable {
    public var server: String
    /// Connected and initialised now. An unavailable server keeps its last known list.
    public var available: Bool
    /// The last known list, filtered by the server's `tools` allow-list; empty before the first list.
    public var tools: [MCPTool]

    public init(server: String, available: Bool, tools: [MCPTool]) {
        self.server = server
        self.available = available
        self.tools = tools
    }
}

/// Why a call gave no `MCPToolResult`. `message` is for people and logs (never a secret).
public struct MCPCallError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// No configured server has this name.
        case unknownServer
        /// The server is not connected (down at start, crashed, unreachable, or shut down).
        case serverUnavailable
        /// The server does not list this tool, or its allow-list leaves it out.
        case unknownTool
        /// No answer and no progress within the server's `timeout`; the server was told to cancel.
        case timeout
        /// The calling task was cancelled; the server was told to cancel.
        case cancelled
        /// The server answered with a JSON-RPC error (its code).
        case rejected(code: Int)
        /// The server broke the protocol (malformed or oversized message, missing answer).
        case protocolError
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
