/// Why a Redis command failed, so callers can tell a dead server (fail closed, retry later) from a
/// refused command (a bug or a bad argument) without reading text.
public enum RedisError: Error, Equatable, CustomStringConvertible {
    /// The server could not be reached, or the connection broke (the next call reconnects).
    case connection(String)
    /// No answer within the command timeout (the connection is dropped; the next call reconnects).
    case timeout
    /// The server answered with an error reply: its text, e.g. "WRONGTYPE Operation against a key…".
    case server(String)
    /// The answer was not what the command returns (a bug, or not a Redis server).
    case `protocol`(String)

    public var description: String {
        switch self {
        case .connection(let text): "redis connection: \(text)"
        case .timeout: "redis: no answer within the command timeout"
        case .server(let text): "redis: \(text)"
        case .protocol(let text): "redis protocol: \(text)"
        }
    }
}
