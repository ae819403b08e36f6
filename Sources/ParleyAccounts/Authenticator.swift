import Foundation
import ParleyAPI
import ParleyAuth
import ParleyHTTP
import ParleyStore

/// Module ParleyAccounts: who may call (sign-in, sessions, tokens, admin, audit). It must never
/// know conversations or replies beyond stopping a disabled user's.
///
/// Finds the caller of a request. In local mode everyone is the implicit local user; in team mode a
/// request carries an API token (`Authorization: Bearer`) or a session cookie, or it is refused with
/// 401 `unauthenticated`. Other `Authorization` schemes are not Parley's and are ignored. Secrets are
/// looked up by their digest only.
package struct Authenticator: Sendable {
    let store: Store
    let settings: AccountSettings
    /// Reverse proxies whose `X-Forwarded-Proto` (and sign-in header) is believed.
    let trustedProxies: [AddressRange]

    package init(store: Store, settings: AccountSettings, trustedProxies: [AddressRange]) {
        self.store = store
        self.settings = settings
        self.trustedProxies = trustedProxies
    }

    static let cookieName = "parley_session"

    package func caller(for request: HTTPRequest) throws -> Caller {
        guard settings.mode == .team else { return .local }
        if let caller = try proxyCaller(request) { return caller }
        // A Bearer token is Parley's own: a wrong one is 401, whatever else the request carries. Any
        // other scheme (Basic from a proxy that guards itself with it) is not Parley's and is ignored,
        // so the session cookie beside it still counts; alone it is 401 like no credential at all.
        if let authorization = request.header("Authorization"), let secret = Self.bearerSecret(authorization) {
            guard let (token, user) = try store.token(digest: SecretToken.digest(secret)) else {
                throw APIErrors.unauthenticated
            }
            return Caller(user: user, credential: .apiToken(id: token.id))
        }
        // Every `parley_session` the request carries is tried: a stale one planted beside the real
        // one (from a sibling domain, say) must not lock the user out.
        for secret in Self.sessionSecrets(request) {
            if let (session, user) = try session(secret) {
                return Caller(user: user, credential: .session(id: session.id))
            }
        }
        throw APIErrors.unauthenticated
    }

    /// The secret of `Bearer <secret>` (the scheme in any case); "" for a bare `Bearer`, so it is
    /// refused rather than ignored. Nil for any other scheme.
    private static func bearerSecret(_ authorization: String) -> String? {
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard let scheme = parts.first, scheme.lowercased() == "bearer" else { return nil }
        return parts.count == 2 ? String(parts[1]) : ""
    }

    // MARK: - Proxy sign-in

    /// The user a trusted reverse proxy vouches for in `PARLEY_AUTH_HEADER`, created as a member
    /// (without a password) the first time it is named. The header counts only from an address in
    /// PARLEY_TRUSTED_PROXIES: from anywhere else it is ignored, and the request needs a token or a
    /// session like any other. The proxy's word wins over a cookie or token the request also carries.
    /// A disabled user, or a name outside `ProxyUsername`'s rule, is refused (401).
    private func proxyCaller(_ request: HTTPRequest) throws -> Caller? {
        // An empty value (a proxy that signs nobody in on this path) is the same as no header.
        guard let header = settings.proxyHeader, let raw = request.header(header),
              !raw.trimmingCharacters(in: .whitespaces).isEmpty,
              trustedProxies.contains(address: request.remoteAddress) else { return nil }
        guard let username = ProxyUsername.validated(raw) else {
            Audit.record("proxy_sign_in_refused", ["reason": "invalid username", "address": request.remoteAddress])
            throw APIErrors.unauthenticated
        }
        var user = try store.user(username: username)
        if user == nil {
            do {
                user = try store.createUser(username: username, displayName: username, role: .member, passwordHash: nil)
                Audit.record("user_created", ["username": username, "role": "member", "by": "proxy header",
                                              "address": request.remoteAddress])
            } catch {
                // Two first requests at once: the other one created it.
                guard case .conflict = error else { throw error }
                user = try store.user(username: username)
            }
        }
        guard let user, !user.disabled else {
            Audit.record("proxy_sign_in_refused", ["username": username, "reason": "disabled",
                                                   "address": request.remoteAddress])
            throw APIErrors.unauthenticated
        }
        return Caller(user: user, credential: .proxy)
    }

    /// The live session behind a cookie's secret.
    func session(_ secret: String) throws -> (session: Credential, user: User)? {
        let now = settings.now()
        return try store.session(digest: SecretToken.digest(secret),
                                 idleCutoff: now.addingTimeInterval(-settings.sessionIdle),
                                 lifetimeCutoff: now.addingTimeInterval(-settings.sessionLifetime))
    }

    // MARK: - Cookies

    /// The `parley_session` cookies' values, in the order sent.
    static func sessionSecrets(_ request: HTTPRequest) -> [String] {
        guard let header = request.header("Cookie") else { return [] }
        return header.split(separator: ";").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == cookieName else { return nil }
            let value = parts[1].trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : value
        }
    }

    /// `Set-Cookie` for a new session: script cannot read it, other sites' requests do not carry it
    /// (except top-level navigations), and it is `Secure` whenever the user reached us over https.
    func sessionCookie(_ secret: String, for request: HTTPRequest) -> String {
        "\(Self.cookieName)=\(secret); Path=/; HttpOnly; SameSite=Lax; Max-Age=\(Int(settings.sessionLifetime))"
            + (isSecure(request) ? "; Secure" : "")
    }

    /// `Set-Cookie` that removes the session cookie.
    func clearedCookie(for request: HTTPRequest) -> String {
        "\(Self.cookieName)=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0" + (isSecure(request) ? "; Secure" : "")
    }

    /// The client's address: behind a trusted proxy, the nearest untrusted hop of `X-Forwarded-For`
    /// (so sign-in limits count each client, not the proxy everyone shares); otherwise the peer.
    func clientAddress(_ request: HTTPRequest) -> String {
        guard trustedProxies.contains(address: request.remoteAddress),
              let forwarded = request.header("X-Forwarded-For") else { return request.remoteAddress }
        let hops = forwarded.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        return hops.reversed().first { !$0.isEmpty && !trustedProxies.contains(address: $0) } ?? request.remoteAddress
    }

    private func isSecure(_ request: HTTPRequest) -> Bool {
        if let forced = settings.secureCookie { return forced }
        return trustedProxies.contains(address: request.remoteAddress)
            && request.header("X-Forwarded-Proto")?.lowercased() == "https"
    }
}
