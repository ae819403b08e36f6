import ParleyUpstream

/// Transport limits applied to every upstream request of a provider.
public struct UpstreamLimits: Sendable, Equatable {
    public var connectTimeout: Duration
    /// No byte from the model server for this long fails the call (`upstream_timeout`).
    public var idleTimeout: Duration
    /// A response body larger than this fails the call (`response_too_large`).
    public var maxResponseBytes: Int

    public init(connectTimeout: Duration = UpstreamRequest.defaultConnectTimeout,
                idleTimeout: Duration = UpstreamRequest.defaultIdleTimeout,
                maxResponseBytes: Int = UpstreamRequest.defaultMaxResponseBytes) {
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.maxResponseBytes = maxResponseBytes
    }

    func request(url: String, method: String = "GET", headers: [(String, String)], body: [UInt8] = []) -> UpstreamRequest {
        UpstreamRequest(url: url, method: method, headers: headers, body: body, connectTimeout: connectTimeout,
                        idleTimeout: idleTimeout, maxResponseBytes: maxResponseBytes)
    }
}
