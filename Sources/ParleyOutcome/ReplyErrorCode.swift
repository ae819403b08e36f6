/// Why a reply failed or was cut: the `error.code` stored with the message and sent in its `error`
/// event. Providers throw these (`ProviderError.Code`), the server adds its own (`serverShutdown`), the
/// store keeps them in `messages.error_code`. The text (`rawValue`) exists only at the edges (SQL, JSON).
public enum ReplyErrorCode: Sendable, Equatable, Hashable, RawRepresentable, ExpressibleByStringLiteral {
    case upstreamHTTPError
    case upstreamUnauthorized
    case rateLimited
    case upstreamUnavailable
    /// The stream ended without a finish reason.
    case upstreamTruncated
    /// `[DONE]` without a finish reason.
    case upstreamInterrupted
    /// A malformed frame or invalid UTF-8.
    case upstreamProtocol
    /// An error object or event mid-stream.
    case upstreamError
    case upstreamTimeout
    case responseTooLarge
    case connectionFailed
    case cancelled
    /// A graceful shutdown cut the reply (it ends `interrupted`).
    case serverShutdown
    /// The node that ran the reply died and no other continued it (several nodes, PARLEY_FAILOVER=off).
    case nodeLost
    /// The followed message went away (a stream's `error`, never stored).
    case notFound
    /// A code this version has no case for, kept as given (an older row, an imported file's).
    case other(String)

    /// The stored and sent text (`upstream_timeout`, `server_shutdown`, …; another code as given).
    public var rawValue: String {
        switch self {
        case .upstreamHTTPError: "upstream_http_error"
        case .upstreamUnauthorized: "upstream_unauthorized"
        case .rateLimited: "rate_limited"
        case .upstreamUnavailable: "upstream_unavailable"
        case .upstreamTruncated: "upstream_truncated"
        case .upstreamInterrupted: "upstream_interrupted"
        case .upstreamProtocol: "upstream_protocol"
        case .upstreamError: "upstream_error"
        case .upstreamTimeout: "upstream_timeout"
        case .responseTooLarge: "response_too_large"
        case .connectionFailed: "connection_failed"
        case .cancelled: "cancelled"
        case .serverShutdown: "server_shutdown"
        case .nodeLost: "node_lost"
        case .notFound: "not_found"
        case .other(let value): value
        }
    }

    /// The code a stored or imported text names; never fails (an unknown text is `.other`).
    public init(rawValue: String) {
        switch rawValue {
        case "upstream_http_error": self = .upstreamHTTPError
        case "upstream_unauthorized": self = .upstreamUnauthorized
        case "rate_limited": self = .rateLimited
        case "upstream_unavailable": self = .upstreamUnavailable
        case "upstream_truncated": self = .upstreamTruncated
        case "upstream_interrupted": self = .upstreamInterrupted
        case "upstream_protocol": self = .upstreamProtocol
        case "upstream_error": self = .upstreamError
        case "upstream_timeout": self = .upstreamTimeout
        case "response_too_large": self = .responseTooLarge
        case "connection_failed": self = .connectionFailed
        case "cancelled": self = .cancelled
        case "server_shutdown": self = .serverShutdown
        case "node_lost": self = .nodeLost
        case "not_found": self = .notFound
        default: self = .other(rawValue)
        }
    }

    /// A literal is read as stored text (fixtures and tests write `"upstream_timeout"`).
    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }
}
