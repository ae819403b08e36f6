/// Every bound the MCP client keeps, and its one protocol switch, named in one place (docs/mcp.md
/// lists them). The defaults suit production; tests shorten the waits.
public struct MCPSettings: Sendable {
    /// Largest single JSON-RPC message read from a server (an HTTP answer, an SSE event, a stdio line): 4 MiB.
    public var maxMessageBytes = 4 << 20
    /// Largest whole HTTP answer to one POST (an SSE stream may carry many messages): 16 MiB.
    public var maxExchangeBytes = 16 << 20
    /// Most `tools/list` pages followed through `nextCursor`: 20.
    public var maxToolPages = 20
    /// Most tools kept per server: 1,000.
    public var maxTools = 1_000
    /// Time allowed for `initialize` and for each `tools/list` page: 30 s.
    public var handshakeTimeout: Duration = .seconds(30)
    /// Time allowed to open an HTTP connection: 10 s.
    public var connectTimeout: Duration = .seconds(10)
    /// First wait before reconnecting or restarting a server that is down; doubled each failure: 1 s.
    public var restartBackoffInitial: Duration = .seconds(1)
    /// Longest wait between reconnection attempts: 60 s.
    public var restartBackoffMax: Duration = .seconds(60)
    /// A connection that stayed up this long resets the backoff to its first step: 60 s.
    public var stableUptime: Duration = .seconds(60)
    /// At shutdown, time a stdio child gets after its stdin closes, and again after SIGTERM, before SIGKILL: 2 s.
    public var shutdownGrace: Duration = .seconds(2)
    /// Time allowed for the best-effort DELETE that ends an HTTP session at shutdown: 2 s.
    public var sessionEndTimeout: Duration = .seconds(2)
    /// The end of a stdio child's stderr kept to log when it exits: 8 KiB and 50 lines.
    public var stderrTailBytes = 8 << 10
    public var stderrTailLines = 50
    /// Longest server log message (`notifications/message`) or error text kept: 2,000 characters.
    public var maxLoggedCharacters = 2_000

    /// Try the single-exchange protocol (2026-07-28, `server/discover`) before `initialize` on HTTP
    /// servers: true. False always uses the initialize handshake (2025-11-25 and older).
    public var offerStatelessProtocol = true

    public init() {}
}
