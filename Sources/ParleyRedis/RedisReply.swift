/// One reply of the RESP2 protocol as a Swift value, copied out of hiredis's reply tree (which is
/// freed at once). Bulk strings stay bytes: stream fields carry UTF-8 cut anywhere, or binary.
public enum RedisReply: Sendable, Equatable {
    /// A bulk string, byte for byte.
    case string([UInt8])
    /// A simple status such as "OK" or "PONG".
    case status(String)
    case integer(Int64)
    /// The nil bulk string or nil array (a missing key, an XREAD BLOCK that timed out).
    case null
    case array([RedisReply])
    /// An error reply inside an array (a top-level one is thrown as `RedisError.server`).
    case error(String)

    /// A bulk string or status as text (nil if not UTF-8, or another kind).
    public var text: String? {
        switch self {
        case .string(let bytes): String(validating: bytes, as: UTF8.self)
        case .status(let status): status
        default: nil
        }
    }

    public var integer: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    public var elements: [RedisReply]? {
        if case .array(let elements) = self { elements } else { nil }
    }

    public var bytes: [UInt8]? {
        if case .string(let bytes) = self { bytes } else { nil }
    }
}
