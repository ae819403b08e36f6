import ParleyPrimitives

/// Where a Redis server is and how to sign in to it, read from `PARLEY_REDIS_URL`.
///
/// Accepted forms (what redis-py and most clients accept, minus TLS, which Debian's hiredis 0.14 lacks):
/// - `redis://[user:password@]host[:port][/db]` (port 6379 by default, db 0; `[::1]` for IPv6 hosts;
///   `redis://:password@host` signs in as the default user);
/// - `redis+unix://[user:password@]/path/to/redis.sock[?db=N]` (also `unix://`).
/// User and password may be percent-encoded. The password is never printed: `description`, `debugDescription`
/// and the mirror (`dump`, `print` of a containing value) all show `***` instead, and no parse error quotes it.
public struct RedisURL: Sendable, Equatable {
    /// How to reach the server.
    public enum Endpoint: Sendable, Equatable {
        case tcp(host: String, port: Int)
        case unix(path: String)
    }

    public var endpoint: Endpoint
    /// The ACL user for `AUTH user password`; nil means `AUTH password` (the default user).
    public var user: String?
    public var password: String?
    /// The logical database, chosen with `SELECT` after connecting when it is not 0.
    public var database: Int

    public init(endpoint: Endpoint, user: String? = nil, password: String? = nil, database: Int = 0) {
        self.endpoint = endpoint
        self.user = user
        self.password = password
        self.database = database
    }

    /// The highest database number accepted (Redis's default `databases 16` allows 0...15; servers
    /// configured with more are rare, and SELECT refuses what the server lacks anyway).
    public static let maximumDatabase = 1_000_000

    public init(parsing text: String) throws(RedisURLError) {
        guard let separator = text.range(of: "://") else { throw .notAURL }
        let scheme = text[..<separator.lowerBound].lowercased()
        var rest = Substring(text[separator.upperBound...])
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        switch scheme {
        case "redis":
            try self.init(tcp: rest)
        case "redis+unix", "unix":
            try self.init(unix: rest)
        case "rediss":
            throw .tlsUnsupported
        default:
            throw .unsupportedScheme(String(scheme))
        }
        try applyQuery(query)
    }

    private init(tcp rest: Substring) throws(RedisURLError) {
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        let path = rest[authorityEnd...]
        var user: String?
        var password: String?
        if let at = authority.lastIndex(of: "@") {
            (user, password) = try Self.credentials(authority[..<at])
            authority = authority[authority.index(after: at)...]
        }
        let (host, port) = try Self.hostAndPort(authority)
        var database = 0
        let digits = path.dropFirst()
        if !digits.isEmpty { database = try Self.database(digits) }
        self.init(endpoint: .tcp(host: host, port: port), user: user, password: password, database: database)
    }

    private init(unix rest: Substring) throws(RedisURLError) {
        var path = rest
        var user: String?
        var password: String?
        // The credentials end at the last "@" before the path's first "/".
        let pathStart = rest.firstIndex(of: "/") ?? rest.endIndex
        if let at = rest[..<pathStart].lastIndex(of: "@") {
            (user, password) = try Self.credentials(rest[..<at])
            path = rest[rest.index(after: at)...]
        }
        guard path.first == "/", path.count > 1 else { throw .socketPathNotAbsolute }
        guard let decoded = PercentDecoding.decode(path) else { throw .badPercentEncoding(part: "socket path") }
        // sockaddr_un's sun_path holds 108 bytes with the terminating NUL.
        guard decoded.utf8.count <= 107 else { throw .socketPathTooLong(decoded.utf8.count) }
        self.init(endpoint: .unix(path: decoded), user: user, password: password)
    }

    private mutating func applyQuery(_ query: Substring) throws(RedisURLError) {
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0]
            let value = parts.count > 1 ? parts[1] : ""
            switch name {
            case "db": database = try Self.database(value)
            default: throw .unknownParameter(String(name))
            }
        }
    }

    private static func credentials(_ userinfo: Substring) throws(RedisURLError) -> (String?, String?) {
        guard let colon = userinfo.firstIndex(of: ":") else { throw .userWithoutPassword }
        guard let user = PercentDecoding.decode(userinfo[..<colon]) else { throw .badPercentEncoding(part: "user") }
        guard let password = PercentDecoding.decode(userinfo[userinfo.index(after: colon)...]) else {
            throw .badPercentEncoding(part: "password")
        }
        guard !password.isEmpty else { throw .emptyPassword }
        return (user.isEmpty ? nil : user, password)
    }

    private static func hostAndPort(_ authority: Substring) throws(RedisURLError) -> (String, Int) {
        var host: Substring
        var portText: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { throw .badHost }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw .badHost }
                portText = after.dropFirst()
            }
        } else {
            host = authority
            if let colon = authority.firstIndex(of: ":") {
                host = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            }
        }
        guard !host.isEmpty else { throw .missingHost }
        guard host.allSatisfy({ $0.isLetter || $0.isNumber || "-._:%".contains($0) }) else { throw .badHost }
        var port = 6379
        if let portText {
            guard portText.count <= 5, portText.allSatisfy(\.isASCIIDigit), let value = Int(portText),
                  (1...65_535).contains(value) else { throw .badPort(String(portText.prefix(16))) }
            port = value
        }
        return (String(host), port)
    }

    private static func database(_ text: Substring) throws(RedisURLError) -> Int {
        guard text.count <= 7, text.allSatisfy(\.isASCIIDigit), let value = Int(text), value <= maximumDatabase else {
            throw .badDatabase(String(text.prefix(16)))
        }
        return value
    }
}

extension RedisURL: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The URL with the password replaced by `***`: safe for logs.
    public var description: String {
        var credentials = ""
        if password != nil { credentials = "\(user ?? ""):***@" }
        let database = database == 0 ? "" : "\(database)"
        switch endpoint {
        case .tcp(let host, let port):
            let shownHost = host.contains(":") ? "[\(host)]" : host
            return "redis://\(credentials)\(shownHost):\(port)\(database.isEmpty ? "" : "/\(database)")"
        case .unix(let path):
            return "redis+unix://\(credentials)\(path)\(database.isEmpty ? "" : "?db=\(database)")"
        }
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["endpoint": endpoint, "user": user as Any, "password": password == nil ? "nil" : "***",
                                "database": database])
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
