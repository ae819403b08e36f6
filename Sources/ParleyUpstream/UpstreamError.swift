/// Why an upstream transfer failed. Messages come from libcurl's description of the failure and
/// never contain request headers (API keys).
public enum UpstreamError: Error, Sendable, Equatable {
    /// Could not connect, or the connection broke (before or after the headers).
    case connectionFailed(String)
    /// No byte arrived for `UpstreamRequest.idleTimeout`.
    case idleTimeout
    /// The body grew past `UpstreamRequest.maxResponseBytes`.
    case responseTooLarge
    /// The caller cancelled (task cancelled or body stream dropped), or the client shut down.
    case cancelled
    /// Any other failure (bad URL, invalid header, TLS setup, ...).
    case other(String)
}
