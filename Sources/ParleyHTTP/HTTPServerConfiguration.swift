import Foundation

/// Everything an `HTTPServer` needs to know before it binds. Every limit here is enforced by the server
/// and has a test; defaults suit a small self-hosted deployment on a few cores.
public struct HTTPServerConfiguration: Sendable {
    /// IPv4 or IPv6 literal to bind (`127.0.0.1`, `0.0.0.0`, `::1`).
    public var host: String
    /// TCP port; 0 asks the kernel for a free one (read it back from `HTTPServer.port`).
    public var port: Int
    /// Number of libmicrohttpd worker threads (each runs its own epoll loop).
    public var threadPoolSize: Int
    /// Simultaneous connections accepted; further clients wait in the listen backlog.
    public var connectionLimit: Int
    /// Per-connection memory pool in bytes: must hold the request line, headers and one body piece.
    public var connectionMemoryLimit: Int
    /// Idle seconds before a connection that is not suspended is closed (0 = never).
    public var connectionTimeout: TimeInterval
    /// Length of the kernel's listen queue.
    public var listenBacklog: Int
    /// Largest request body accepted; larger bodies get 413 `payload_too_large` and the connection closes.
    /// A route may have its own (`Router.on(_:_:maxBodyBytes:_:)`); upload routes have `UploadRoute.maxBytes`.
    public var maxBodyBytes: Int
    /// A body over `maxBodyBytes` without a Content-Length (chunked) is read and dropped up to this many
    /// bytes so that 413 can be answered at its end; past it the connection is closed without an answer.
    /// nil: four times `maxBodyBytes`.
    public var maxDiscardBytes: Int?
    /// Seconds from accept (or, on a kept-alive connection, from the request line) to the end of the
    /// request headers; a connection still sending them is closed (slow-header attacks).
    public var headerTimeout: TimeInterval
    /// Open connections one client address may hold; nil: a quarter of `connectionLimit`.
    public var connectionsPerAddress: Int?
    /// Addresses exempt from `connectionsPerAddress` (reverse proxies, which carry every client).
    public var trustedProxies: [AddressRange]
    /// Allowed `Host` names and writing origins (DNS rebinding, cross-site requests).
    public var originPolicy: OriginPolicy
    /// Unsent bytes an event stream may hold for a slow client before the stream is closed.
    public var streamBacklogLimit: Int
    /// Unsent bytes all event streams together may hold; past it the streams with the largest backlogs
    /// are closed (their clients reconnect with Last-Event-ID and miss nothing). Without it the bound is
    /// `connectionLimit` × `streamBacklogLimit` (16 GiB by default).
    public var streamBacklogTotalLimit: Int
    /// Seconds of silence after which an event stream gets a `: ping` comment, so a dead client is noticed.
    public var heartbeatInterval: TimeInterval
    /// Folder served for GET/HEAD when no route matches (`index.html` at `/`); nil serves nothing.
    public var publicDirectory: String?
    /// Seconds `shutdown()` lets open event streams drain after finishing them before dropping them.
    public var shutdownGracePeriod: TimeInterval
    /// Upload bodies (`UploadRoute`) received at once; more get 503 `busy` at headers time. Each holds
    /// a temp file until its handler returns, so this also bounds the disk they use.
    public var maxConcurrentUploads: Int
    /// Where upload bodies are written while they arrive: created if missing (0700); the temp files
    /// of an earlier run are deleted at start. nil: a private folder in the system's temp folder,
    /// removed at shutdown. Used only when the router has an upload route.
    public var uploadDirectory: String?
    /// Headers added to every response (security headers); `X-Content-Type-Options: nosniff` is always sent.
    public var defaultHeaders: [(String, String)]

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        threadPoolSize: Int = ProcessInfo.processInfo.activeProcessorCount,
        connectionLimit: Int = 4096,
        connectionMemoryLimit: Int = 32 * 1024,
        connectionTimeout: TimeInterval = 120,
        listenBacklog: Int = 1024,
        maxBodyBytes: Int = 1 << 20,
        maxDiscardBytes: Int? = nil,
        headerTimeout: TimeInterval = 10,
        connectionsPerAddress: Int? = nil,
        trustedProxies: [AddressRange] = [],
        originPolicy: OriginPolicy = OriginPolicy(),
        streamBacklogLimit: Int = 4 << 20,
        streamBacklogTotalLimit: Int = 256 << 20,
        heartbeatInterval: TimeInterval = 15,
        publicDirectory: String? = nil,
        shutdownGracePeriod: TimeInterval = 5,
        maxConcurrentUploads: Int = 32,
        uploadDirectory: String? = nil,
        defaultHeaders: [(String, String)] = [("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY")]
    ) {
        self.host = host
        self.port = port
        self.threadPoolSize = threadPoolSize
        self.connectionLimit = connectionLimit
        self.connectionMemoryLimit = connectionMemoryLimit
        self.connectionTimeout = connectionTimeout
        self.listenBacklog = listenBacklog
        self.maxBodyBytes = maxBodyBytes
        self.maxDiscardBytes = maxDiscardBytes
        self.headerTimeout = headerTimeout
        self.connectionsPerAddress = connectionsPerAddress
        self.trustedProxies = trustedProxies
        self.originPolicy = originPolicy
        self.streamBacklogLimit = streamBacklogLimit
        self.streamBacklogTotalLimit = streamBacklogTotalLimit
        self.heartbeatInterval = heartbeatInterval
        self.publicDirectory = publicDirectory
        self.shutdownGracePeriod = shutdownGracePeriod
        self.maxConcurrentUploads = maxConcurrentUploads
        self.uploadDirectory = uploadDirectory
        self.defaultHeaders = defaultHeaders
    }

    /// `maxDiscardBytes` with its default applied.
    var discardLimit: Int { maxDiscardBytes ?? (maxBodyBytes > Int.max / 4 ? Int.max : maxBodyBytes * 4) }

    /// `connectionsPerAddress` with its default applied.
    var perAddressLimit: Int { connectionsPerAddress ?? max(1, connectionLimit / 4) }
}
