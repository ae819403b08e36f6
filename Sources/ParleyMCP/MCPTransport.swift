import ParleyPrimitives

/// What a transport tells its connection, in the order it happened.
enum TransportEvent: Sendable {
    /// One JSON-RPC message from the server.
    case message(JSON)
    /// Something unreadable that was skipped (an oversized or non-JSON line); logged, not fatal.
    case malformed(String)
    /// The transport is gone for good (the child exited): the connection ends and reconnects.
    case closed(String)
}

/// Why a send failed. Messages name no header or environment value.
enum TransportFailure: Error, Sendable, Equatable {
    /// Could not reach the server (refused, broken, child not running): the connection ends.
    case unavailable(String)
    /// HTTP 404 to a request carrying a session id: the server forgot the session.
    case sessionExpired
    /// The server refused the message (an HTTP status other than 2xx, with its detail).
    case rejected(String)
    /// The answer broke the protocol (not JSON, too large, ended without the response).
    case protocolError(String)
    /// The exchange was abandoned (its task cancelled).
    case cancelled
}

/// One way of exchanging JSON-RPC messages with one server, used for one connection's life (a
/// reconnection makes a new one). Incoming messages go to the stream given to `open`, in order.
protocol MCPTransport: Sendable {
    /// Starts the transport (spawns the child; nothing to do for HTTP).
    func open(events: AsyncStream<TransportEvent>.Continuation) async throws(TransportFailure)
    /// Sends one message. HTTP: POSTs it and yields every message of the answer before returning;
    /// when `expecting` (a request id) is given and the answer did not hold that response, throws
    /// `.protocolError`. stdio: writes the line and returns.
    func send(_ message: JSON, expecting id: JSON?, idleTimeout: Duration) async throws(TransportFailure)
    /// The protocol version agreed (HTTP sends it as `MCP-Protocol-Version`); nil forgets the session.
    func negotiated(version: String?)
    /// Whether this transport can speak the single-exchange protocol (2026-07-28): HTTP only.
    var supportsStatelessProtocol: Bool { get }
    /// Stops the transport: ends the HTTP session, or stops the child (stdin closed, SIGTERM, SIGKILL).
    func close() async
}
