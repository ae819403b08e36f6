import Foundation
import ParleyAPI
import ParleyAuth
import ParleyHTTP
import ParleyStore

/// Sign-in, sign-out and "who am I". Sign-in answers the same 401 for a wrong password, an unknown
/// user and a disabled one, after the same Argon2id work and the same time (that of the slowest
/// password cost still stored: `PasswordWork.padFailure`), and counts failures per username and
/// per address.
package struct AuthHandlers: Sendable {
    let store: Store
    let authenticator: Authenticator
    let passwords: PasswordWork
    let limiter: any SignInAttempts
    /// The streams and exports opened with a session that ends here (sign-out, or trimmed at sign-in).
    let streams: OpenStreams

    package init(store: Store, authenticator: Authenticator, passwords: PasswordWork, limiter: any SignInAttempts, streams: OpenStreams) {
        self.store = store
        self.authenticator = authenticator
        self.passwords = passwords
        self.limiter = limiter
        self.streams = streams
    }

    /// `POST /api/auth/login`: public (no caller yet).
    package func login(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard authenticator.settings.mode == .team else {
            throw HTTPError(status: 404, code: "not_found", message: "Local mode has no accounts (PARLEY_AUTH=on enables them).")
        }
        let body = try JSONBody(request)
        let username = try body.requiredString("username")
        let password = try body.requiredString("password")
        let address = authenticator.clientAddress(request)
        // A name no account can have is only counted against the address (no unbounded keys, no
        // megabyte audit lines); it gets the same 401 as any other failure.
        let userKey = "user:" + username.lowercased()
        let plausible = AccountRules.isPlausibleUsername(username)
        let keys = plausible ? [userKey, "address:" + address] : ["address:" + address]
        if let wait = try limiter.begin(keys) {
            throw HTTPError(status: 429, code: "too_many_attempts",
                            message: "Too many failed sign-ins; try again in \(wait) s.",
                            headers: [HTTPError.Header("Retry-After", String(wait))])
        }
        let started = ContinuousClock.now
        let user = plausible ? try store.user(username: username) : nil
        let hash = user.flatMap { $0.disabled ? nil : $0.passwordHash }
        guard try await passwords.verify(password, against: hash), let user, let hash else {
            Audit.record("sign_in_failed", ["username": String(username.prefix(64)), "address": address])
            await passwords.padFailure(startedAt: started)
            throw APIErrors.invalidCredentials
        }
        limiter.succeeded(keys, clearing: [userKey])
        if passwords.hasher.needsRehash(hash) {
            // Made under another PARLEY_PASSWORD_MEMORY_KIB: brought to today's cost, so it takes
            // as long to check as every other (and as the decoy). Once no hash has the old cost,
            // failures are no longer padded to it.
            _ = try store.updateUser(id: user.id, passwordHash: try await passwords.hash(password))
            passwords.accountsChanged(try store.users())
        }
        // A session the client brought along is never kept (no fixation): it is ended, a new one made.
        for old in Authenticator.sessionSecrets(request) {
            if let (session, owner) = try authenticator.session(old) {
                try store.deleteSession(id: session.id, userID: owner.id)
                streams.end(of: owner.id) { $0 == .session(id: session.id) }
            }
        }
        let secret = SecretToken.generate(prefix: "ps_")
        _ = try store.createSession(userID: user.id, digest: SecretToken.digest(secret),
                                    userAgent: request.header("User-Agent") ?? "")
        // A user's sessions are bounded: past the cap the least recently used end.
        if try store.trimSessions(userID: user.id, keeping: AccountRules.maxSessionsPerUser) > 0 {
            let live = Set(try store.sessions(userID: user.id).map(\.id))
            streams.end(of: user.id) { credential in
                guard case .session(let id) = credential else { return false }
                return !live.contains(id)
            }
        }
        Audit.record("sign_in", ["username": user.username, "address": address])
        var response = HTTPResponse.json(MeResource(user: user, mode: .team))
        response.headers.append(("Set-Cookie", authenticator.sessionCookie(secret, for: request)))
        return response
    }

    /// `POST /api/auth/logout`: ends the caller's session server-side and clears the cookie.
    package func logout(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        if case .session(let id) = caller.credential {
            try store.deleteSession(id: id, userID: caller.userID)
            streams.end(of: caller.userID) { $0 == .session(id: id) }
            Audit.record("sign_out", ["username": caller.user.username, "address": request.remoteAddress])
        }
        var response = HTTPResponse.noContent()
        response.headers.append(("Set-Cookie", authenticator.clearedCookie(for: request)))
        return response
    }

    /// `GET /api/auth/me`.
    package func me(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        .json(MeResource(user: caller.user, mode: authenticator.settings.mode))
    }
}

/// `{"user": {...}, "mode": "local"|"team"}`: the page decides from it whether to show accounts.
struct MeResource: Encodable {
    let user: UserResource
    let mode: String

    init(user: User, mode: AccountSettings.Mode) {
        self.user = UserResource(user)
        self.mode = mode.rawValue
    }
}

/// An account as the API shows it: never its password hash.
struct UserResource: Encodable {
    let id: String
    let username: String
    let displayName: String
    let role: String
    let disabled: Bool
    let createdAt: String

    init(_ user: User) {
        id = user.id
        username = user.username
        displayName = user.displayName
        role = user.role.rawValue
        disabled = user.disabled
        createdAt = Timestamp.format(user.createdAt)
    }

    enum CodingKeys: String, CodingKey {
        case id, username, role, disabled
        case displayName = "display_name"
        case createdAt = "created_at"
    }
}
