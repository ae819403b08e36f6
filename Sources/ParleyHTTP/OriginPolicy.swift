/// Which `Host` names the server answers to and which pages may change its state: the defence
/// against DNS rebinding (a page whose name resolves to 127.0.0.1 reaches a loopback server with its
/// own `Host`) and against cross-site writes (a form or `no-cors` fetch from any page the user visits).
/// Requests without an `Origin` header (curl, scripts) are not browsers' cross-site requests and pass.
public struct OriginPolicy: Sendable, Equatable {
    /// Host names (lower-case, without port; IPv6 in brackets) a request's `Host` must name; nil accepts any.
    public var allowedHosts: Set<String>?
    /// Origins (`scheme://host[:port]`, lower-case) allowed to write besides the request's own host,
    /// e.g. the public URL a reverse proxy serves Parley under.
    public var trustedOrigins: Set<String>

    public init(allowedHosts: Set<String>? = nil, trustedOrigins: Set<String> = []) {
        self.allowedHosts = allowedHosts.map { Set($0.map { $0.lowercased() }) }
        self.trustedOrigins = Set(trustedOrigins.map { $0.lowercased() })
    }

    /// Names a loopback server always answers to.
    public static let loopbackHosts: Set<String> = ["localhost", "127.0.0.1", "[::1]"]

    /// Methods that change state: only these are checked against `Origin`.
    static let writeMethods: Set<String> = ["POST", "PUT", "PATCH", "DELETE"]

    /// Why the request is refused, or nil. A request with a bearer token (`authorized`) is a
    /// script's: a page cannot add that header to a cross-site request without a CORS preflight,
    /// which is never granted, so its `Origin` is not checked. (Not any `Authorization`: a browser
    /// attaches cached Basic credentials to cross-site requests by itself.)
    func problem(method: String, host: String?, origin: String?, authorized: Bool = false) -> HTTPError? {
        if let allowedHosts {
            guard let host, let name = Self.hostName(host), allowedHosts.contains(name) else {
                return HTTPError(
                    status: 421, code: "misdirected_request",
                    message: "This server does not answer to the host \(Self.quoted(host ?? "")); "
                        + "add it to PARLEY_ALLOWED_HOSTS or set PARLEY_PUBLIC_URL.")
            }
        }
        if Self.writeMethods.contains(method), !authorized, let origin, !isAllowed(origin: origin, host: host) {
            return HTTPError(
                status: 403, code: "cross_origin",
                message: "Requests from the page \(Self.quoted(origin)) may not change anything here.")
        }
        return nil
    }

    private func isAllowed(origin: String, host: String?) -> Bool {
        let origin = origin.lowercased()
        if trustedOrigins.contains(origin) { return true }
        guard let host, let separator = origin.range(of: "://") else { return false }
        let scheme = origin[..<separator.lowerBound]
        let defaultPort = scheme == "https" ? ":443" : scheme == "http" ? ":80" : nil
        guard let defaultPort else { return false }
        let authority = Self.withoutPort(defaultPort, String(origin[separator.upperBound...]))
        return authority == Self.withoutPort(defaultPort, host.lowercased())
    }

    // MARK: - Parsing

    /// The lower-case name in a `Host` value (`Example.org:8080` -> `example.org`, `[::1]:80` -> `[::1]`);
    /// nil when it is not a plausible host.
    public static func hostName(_ host: String) -> String? {
        var value = Substring(host.lowercased())
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return nil }
            let rest = value[value.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber)) else { return nil }
            return String(value[...close])
        }
        if let colon = value.lastIndex(of: ":") {
            guard value[value.index(after: colon)...].allSatisfy(\.isNumber) else { return nil }
            value = value[..<colon]
        }
        if value.hasSuffix(".") { value = value.dropLast() }
        return value.isEmpty ? nil : String(value)
    }

    private static func withoutPort(_ port: String, _ authority: String) -> String {
        authority.hasSuffix(port) ? String(authority.dropLast(port.count)) : authority
    }

    private static func quoted(_ text: String) -> String {
        "'" + String(text.prefix(100)) + "'"
    }
}
