import ParleyPrimitives

/// One parsed HTTP request as handlers see it. The body is complete (never larger than
/// `HTTPServerConfiguration.maxBodyBytes`), or empty for an upload route, whose body is on disk
/// (`UploadedBody`); nothing here refers back to the connection.
public struct HTTPRequest: Sendable {
    /// Upper-case method (`GET`, `POST`, ...).
    public var method: String
    /// Percent-decoded path without the query string.
    public var path: String
    /// Query arguments, percent-decoded (`+` is a space); the last of repeated names wins.
    public var query: [String: String]
    /// Header values keyed by lower-case name; repeated headers are joined with `, `.
    public var headers: [String: String]
    public var body: [UInt8]
    /// Path parameters filled by the router (`:id` -> `parameters["id"]`).
    public var parameters: [String: String]
    /// The peer's IP address as text (empty if unknown).
    public var remoteAddress: String

    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        body: [UInt8] = [], parameters: [String: String] = [:], remoteAddress: String = ""
    ) {
        self.method = method.uppercased()
        self.path = path
        self.query = query
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.lowercased()] = value }
        self.headers = lowered
        self.body = body
        self.parameters = parameters
        self.remoteAddress = remoteAddress
    }

    /// The path parameter the route declared (`:id`); 400 naming it if the router did not fill it.
    public func parameter(_ name: String) throws(HTTPError) -> String {
        guard let value = parameters[name], !value.isEmpty else {
            throw HTTPError.badRequest("The path parameter '\(name)' is missing.")
        }
        return value
    }

    /// Case-insensitive header lookup.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }
}

// MARK: - Target parsing

/// Splits and decodes a raw request target (`/a%20b/c?x=1&y`) the way the router and static files need it.
struct RequestTarget: Equatable {
    /// Raw path segments, each percent-decoded on its own so an encoded `/` stays inside its segment.
    var segments: [String]
    var path: String
    var query: [String: String]
    /// True when decoding found invalid UTF-8 or a truncated escape.
    var isMalformed: Bool

    init(raw: String) {
        let parts = raw.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let rawPath = parts.first.map(String.init) ?? ""
        var malformed = false
        var segments: [String] = []
        for piece in rawPath.split(separator: "/", omittingEmptySubsequences: true) {
            if let decoded = PercentDecoding.decode(piece, plusIsSpace: false) {
                segments.append(decoded)
            } else {
                malformed = true
            }
        }
        self.segments = segments
        self.path = PercentDecoding.decode(Substring(rawPath), plusIsSpace: false) ?? rawPath
        var query: [String: String] = [:]
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&", omittingEmptySubsequences: true) {
                let nameValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = PercentDecoding.decode(nameValue[0], plusIsSpace: true) else {
                    malformed = true
                    continue
                }
                let rawValue = nameValue.count > 1 ? nameValue[1] : ""
                guard let value = PercentDecoding.decode(rawValue, plusIsSpace: true) else {
                    malformed = true
                    continue
                }
                query[name] = value
            }
        }
        self.query = query
        self.isMalformed = malformed
    }
}
