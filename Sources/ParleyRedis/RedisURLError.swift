/// Why `PARLEY_REDIS_URL` could not be read. Messages name the part that is wrong and the form
/// expected; none of them quotes the password.
public enum RedisURLError: Error, Equatable, CustomStringConvertible {
    case notAURL
    case unsupportedScheme(String)
    case tlsUnsupported
    case missingHost
    case badHost
    case badPort(String)
    case badDatabase(String)
    case userWithoutPassword
    case emptyPassword
    case badPercentEncoding(part: String)
    case socketPathNotAbsolute
    case socketPathTooLong(Int)
    case unknownParameter(String)

    public var description: String {
        switch self {
        case .notAURL:
            "not a URL: expected redis://[user:password@]host[:port][/db] or redis+unix:///path/to/redis.sock"
        case .unsupportedScheme(let scheme):
            "unsupported scheme \"\(scheme)\": use redis:// or redis+unix://"
        case .tlsUnsupported:
            "rediss:// (TLS) is not supported: Debian's hiredis 0.14 has no TLS; use redis:// on a private network"
                + " or a local TLS tunnel"
        case .missingHost:
            "the URL has no host: expected redis://host[:port]"
        case .badHost:
            "the host is not a name or an address (IPv6 addresses go in brackets: redis://[::1]:6379)"
        case .badPort(let port):
            "the port \"\(port)\" is not a number from 1 to 65535"
        case .badDatabase(let database):
            "the database \"\(database)\" is not a number from 0 to \(RedisURL.maximumDatabase)"
        case .userWithoutPassword:
            "credentials without a ':': write redis://:PASSWORD@host or redis://USER:PASSWORD@host"
        case .emptyPassword:
            "the password is empty: leave the credentials out to connect without AUTH"
        case .badPercentEncoding(let part):
            "the \(part) has a bad percent-encoding (a '%' must be followed by two hex digits, giving UTF-8)"
        case .socketPathNotAbsolute:
            "the socket path must be absolute: redis+unix:///path/to/redis.sock"
        case .socketPathTooLong(let length):
            "the socket path is \(length) bytes long; a Unix socket path holds at most 107"
        case .unknownParameter(let name):
            "unknown parameter \"\(name)\": the only one accepted is db=N"
        }
    }
}
