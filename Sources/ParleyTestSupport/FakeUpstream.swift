/// A real HTTP/1.1 server on 127.0.0.1 (port chosen by the kernel) that plays scripted responses, for
/// tests of anything that talks to a model server. Built on POSIX sockets and threads; it shares no
/// code with Parley.
///
/// Each request is answered by the script the handler returns, or, with `init()`, by the next
/// enqueued script (an empty queue answers 500). Requests are recorded in arrival order, and a
/// client that disconnects while a response is in progress is recorded with the time it was noticed.
/// Thread-safe. The server stops on `shutdown()` or when this object is dropped.
///
///     let fake = try FakeUpstream()
///     fake.enqueue(.openAIChat(tokens: ["Hel", "lo"]))
///     // point the client at fake.baseURL, then inspect fake.requests
public final class FakeUpstream: Sendable {
    /// Largest request accepted (headers plus body): 16 MiB.
    public static let maxRequestBytes = 16 << 20

    private let server: FakeUpstreamServer

    /// A server answering each request with the script `handler` returns.
    public init(handler: @escaping @Sendable (RecordedRequest) -> Script) throws {
        server = try FakeUpstreamServer(handler: handler)
    }

    /// A server answering requests with enqueued scripts, in order.
    public init() throws {
        server = try FakeUpstreamServer()
    }

    deinit {
        server.shutdown()
    }

    public var port: Int { server.port }
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Queues scripts answered in order (only for a server made with `init()`).
    public func enqueue(_ scripts: Script...) {
        server.enqueue(scripts)
    }

    /// Every request received so far, in arrival order.
    public var requests: [RecordedRequest] { server.requests }

    /// When clients disconnected while a response was still in progress (sending, sleeping or stalled).
    public var disconnects: [ContinuousClock.Instant] { server.disconnects }

    /// Number of TCP connections accepted so far.
    public var connectionCount: Int { server.connectionCount }

    /// Waits until at least `count` disconnects were recorded; returns the latest one, or nil on timeout.
    public func waitForDisconnect(count: Int = 1, timeout: Duration = .seconds(5)) async -> ContinuousClock.Instant? {
        await server.waitForDisconnect(count: count, timeout: timeout)
    }

    /// Stops accepting and ends every open connection. Idempotent.
    public func shutdown() {
        server.shutdown()
    }
}

/// The fake upstream could not open its listening socket.
public enum FakeUpstreamError: Error, Sendable {
    case socket(String)
}
