import Foundation
import ParleyAPI
import ParleyAuth
import ParleyHTTP
import ParleyStore

/// A signed-in user's own account (team mode only): their sessions, their password and their API
/// tokens. Every query is scoped by the caller: another user's session or token id answers 404
/// exactly like one that does not exist.
package struct AccountHandlers: Sendable {
    let store: Store
    let authenticator: Authenticator
    let passwords: PasswordWork
    /// Shared with sign-in: a wrong current password counts against the same username as a failed
    /// sign-in, so a stolen session cannot guess the password faster here.
    let limiter: any SignInAttempts
    /// The streams and exports opened with a session or token that ends here are ended too.
    let streams: OpenStreams

    package init(store: Store, authenticator: Authenticator, passwords: PasswordWork, limiter: any SignInAttempts, streams: OpenStreams) {
        self.store = store
        self.authenticator = authenticator
        self.passwords = passwords
        self.limiter = limiter
        self.streams = streams
    }

    private var settings: AccountSettings { authenticator.settings }

    // MARK: - Sessions

    /// `GET /api/auth/sessions`: the caller's live sessions, newest first.
    package func sessions(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        try AccountRules.requireTeamMode(settings)
        let now = settings.now()
        let idleCutoff = now.addingTimeInterval(-settings.sessionIdle)
        let lifetimeCutoff = now.addingTimeInterval(-settings.sessionLifetime)
        // Rows past their idle time or lifetime sign nobody in; they are not shown as if they could.
        let live = try store.sessions(userID: caller.userID).filter { session in
            session.createdAt >= lifetimeCutoff && (session.lastUsedAt ?? session.createdAt) >= idleCutoff
        }
        return .json(ItemsResource(items: live.map { SessionResource($0, current: $0.id == caller.sessionID) }))
    }

    /// `DELETE /api/auth/sessions/{id}`: signs that session out. Revoking the current one is a sign-out
    /// (the cookie is cleared too).
    package func revokeSession(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        try AccountRules.requireTeamMode(settings)
        try AccountRules.requireSignedInPerson(caller)
        let id = try request.parameter("id")
        guard try store.deleteSession(id: id, userID: caller.userID) else {
            throw HTTPError(status: 404, code: "not_found", message: "No such session.")
        }
        streams.end(of: caller.userID) { $0 == .session(id: id) }
        Audit.record("session_revoked", ["username": caller.user.username, "session_id": id,
                                         "address": request.remoteAddress])
        var response = HTTPResponse.noContent()
        if id == caller.sessionID {
            response.headers.append(("Set-Cookie", authenticator.clearedCookie(for: request)))
        }
        return response
    }

    // MARK: - Password

    /// `POST /api/auth/password {"current","new"}`: 204; every other session of the caller ends (the
    /// one making the request stays signed in; API tokens are kept: they are revoked on their own).
    /// A wrong `current` is 403 `wrong_password`, not 401: the caller is still signed in.
    package func changePassword(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        try AccountRules.requireTeamMode(settings)
        try AccountRules.requireSignedInPerson(caller)
        let body = try JSONBody(request)
        let current = try body.requiredString("current")
        let new = try AccountRules.password(try body.requiredString("new"), field: "new")
        // Counted with the user's sign-ins, success or not: a session cannot guess the password, or
        // keep the Argon2id workers busy, faster than signing in could.
        let key = "user:" + caller.user.username.lowercased()
        if let wait = try limiter.begin([key]) {
            throw HTTPError(status: 429, code: "too_many_attempts",
                            message: "Too many password attempts; try again in \(wait) s.",
                            headers: [HTTPError.Header("Retry-After", String(wait))])
        }
        guard try await passwords.verify(current, against: caller.user.passwordHash) else {
            Audit.record("password_change_failed", ["username": caller.user.username,
                                                    "address": request.remoteAddress])
            throw HTTPError(status: 403, code: "wrong_password", message: "'current' is not your current password.")
        }
        let hash = try await passwords.hash(new)
        guard try store.updateUser(id: caller.userID, passwordHash: hash) != nil else {
            throw APIErrors.unauthenticated  // the account went away meanwhile
        }
        let ended = try store.deleteSessions(userID: caller.userID, keeping: caller.sessionID)
        streams.end(of: caller.userID) { $0.isSession && $0 != caller.credential }
        Audit.record("password_changed", ["username": caller.user.username, "sessions_ended": String(ended),
                                          "address": request.remoteAddress])
        return .noContent()
    }

    // MARK: - API tokens

    /// `POST /api/tokens {"name"}`: 201 with the secret, the only time it is shown (only its digest
    /// is stored). `Cache-Control: no-store` keeps it out of caches.
    package func createToken(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        try AccountRules.requireTeamMode(settings)
        try AccountRules.requireSignedInPerson(caller)
        let body = try JSONBody(request)
        let name = try AccountRules.tokenName(try body.requiredString("name"))
        let secret = SecretToken.generate(prefix: "pt_")
        let token = try store.createToken(userID: caller.userID, name: name, digest: SecretToken.digest(secret),
                                          limit: AccountRules.maxTokensPerUser)
        Audit.record("token_created", ["username": caller.user.username, "token_id": token.id, "name": name,
                                       "address": request.remoteAddress])
        var response = HTTPResponse.json(TokenResource(token, secret: secret), status: 201)
        response.headers.append(("Cache-Control", "no-store"))
        return response
    }

    /// `GET /api/tokens`: the caller's tokens, newest first, without secrets.
    package func tokens(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        try AccountRules.requireTeamMode(settings)
        return .json(ItemsResource(items: try store.tokens(userID: caller.userID).map { TokenResource($0) }))
    }

    /// `DELETE /api/tokens/{id}`: 204; the token is refused from the next request on.
    package func revokeToken(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        try AccountRules.requireTeamMode(settings)
        try AccountRules.requireSignedInPerson(caller)
        let id = try request.parameter("id")
        guard try store.deleteToken(id: id, userID: caller.userID) else {
            throw HTTPError(status: 404, code: "not_found", message: "No such token.")
        }
        streams.end(of: caller.userID) { $0 == .apiToken(id: id) }
        Audit.record("token_revoked", ["username": caller.user.username, "token_id": id,
                                       "address": request.remoteAddress])
        return .noContent()
    }
}

extension Caller {
    /// The session this request came with; nil for an API token, the proxy header or local mode.
    var sessionID: String? {
        if case .session(let id) = credential { return id }
        return nil
    }
}

extension Caller.Credential {
    var isSession: Bool {
        if case .session = self { return true }
        return false
    }
}
