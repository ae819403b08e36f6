import ParleyPrimitives
import ParleyUpstream

/// The configured MCP servers, one connection each, and the only door to them: their tools and
/// calls. Knows nothing of who calls (models, people, approval): that is the caller's.
///
/// Concurrency: an actor, but no call waits on another: each server's connection is its own actor,
/// `tools()` reads a snapshot under a lock, and a call suspends only on its own server.
/// Secrets (header and environment values) never appear in the log or in errors.
public actor MCPServers {
    private let connections: [String: MCPConnection]
    private let board: ToolBoard

    /// A new version number each time a server's availability or tool list changes. Meant for one
    /// consumer (the owner); only the newest number is kept for a slow reader.
    public nonisolated var toolChanges: AsyncStream<Int> { board.changes }

    /// - Parameters:
    ///   - environment: Parley's environment: stdio children get its PATH and HOME (and nothing else of it).
    ///   - clientVersion: sent as `clientInfo.version` in the handshake.
    ///   - log: one line per event (connected, unavailable, a child's stderr when it exits, server log messages).
    public init(configuration: MCPConfiguration, client: UpstreamClient, settings: MCPSettings = MCPSettings(),
                environment: [String: String] = [:], clientVersion: String = "1.0",
                log: @escaping @Sendable (String) -> Void) {
        let board = ToolBoard(servers: configuration.servers.map(\.name))
        var connections: [String: MCPConnection] = [:]
        for server in configuration.servers {
            let makeTransport: @Sendable () -> any MCPTransport
            switch server.transport {
            case .http(let url, let headers):
                makeTransport = { HTTPTransport(url: url, headers: headers, client: client, settings: settings) }
            case .stdio(let command, let arguments, let variables):
                makeTransport = {
                    StdioTransport(command: command, arguments: arguments, environment: variables,
                                   parentEnvironment: environment, settings: settings)
                }
            }
            connections[server.name] = MCPConnection(configuration: server, settings: settings, board: board,
                                                     clientVersion: clientVersion, log: log, makeTransport: makeTransport)
        }
        self.connections = connections
        self.board = board
    }

    /// Connects every server concurrently and returns when each has made its first attempt (bounded by
    /// `MCPSettings.handshakeTimeout`). Never throws: a server down now is retried with backoff in
    /// the background.
    public func start() async {
        await withTaskGroup(of: Void.self) { group in
            for connection in connections.values {
                group.addTask { await connection.start() }
            }
        }
    }

    /// Per server, sorted by name: whether it is connected now, and its last known tools (filtered
    /// by its allow-list; an unavailable server keeps its last list, or an empty one).
    public nonisolated func tools() -> [MCPServerTools] { board.all }

    /// The number `toolChanges` last told.
    public nonisolated var toolsVersion: Int { board.version }

    /// Calls `tool` on `server` with `arguments` (a JSON object). Waits at most the server's `timeout`
    /// without an answer or a progress notification (each calls `onProgress`). Cancelling the calling
    /// task abandons the call and tells the server (`notifications/cancelled`).
    public func call(server: String, tool: String, arguments: JSON,
                     onProgress: (@Sendable () -> Void)? = nil) async throws(MCPCallError) -> MCPToolResult {
        guard let connection = connections[server] else {
            throw MCPCallError(.unknownServer, "no MCP server is configured as '\(server)'")
        }
        return try await connection.call(tool: tool, arguments: arguments, onProgress: onProgress)
    }

    /// Stops every server: stdio children get their stdin closed, then SIGTERM, then SIGKILL (each after
    /// `shutdownGrace`); HTTP sessions are ended with a DELETE (best effort). Calls in flight fail.
    public func shutdown() async {
        await withTaskGroup(of: Void.self) { group in
            for connection in connections.values {
                group.addTask { await connection.shutdown() }
            }
        }
        board.finish()
    }
}
