/// One HTTP request to a model server. Headers may carry API keys: they are sent and never echoed
/// into errors or logs.
public struct UpstreamRequest: Sendable {
    /// Default time without a single received byte before the transfer fails (60 s).
    public static let defaultIdleTimeout: Duration = .seconds(60)
    /// Default time allowed to establish the connection (10 s).
    public static let defaultConnectTimeout: Duration = .seconds(10)
    /// Default cap on the response body (64 MiB).
    public static let defaultMaxResponseBytes = 64 << 20

    public var url: String
    /// Upper-case method, e.g. "GET" or "POST".
    public var method: String
    public var headers: [(String, String)]
    public var body: [UInt8]
    public var connectTimeout: Duration
    /// No byte received for this long -> `UpstreamError.idleTimeout`.
    public var idleTimeout: Duration
    /// More body bytes than this -> `UpstreamError.responseTooLarge` and the transfer is aborted.
    public var maxResponseBytes: Int

    public init(url: String,
                method: String = "GET",
                headers: [(String, String)] = [],
                body: [UInt8] = [],
                connectTimeout: Duration = UpstreamRequest.defaultConnectTimeout,
                idleTimeout: Duration = UpstreamRequest.defaultIdleTimeout,
                maxResponseBytes: Int = UpstreamRequest.defaultMaxResponseBytes) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.maxResponseBytes = maxResponseBytes
    }
}
