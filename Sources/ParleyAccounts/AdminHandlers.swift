import ParleyAPI
import ParleyGeneration
import ParleyHTTP
import ParleyStore

/// Accounts as an admin manages them (team mode only): list, create, change (role, disabled,
/// password, display name) and usage counts. A member gets 403 `forbidden` on every route, whatever
/// the id. An admin sees accounts, never a member's conversations: usage is counts only. Creating and
/// changing accounts needs an admin's session (403 `session_required` with an API token); listing
/// and usage do not.
package struct AdminHandlers: Sendable {
    let store: Store
    let generations: Generations
    let passwords: PasswordWork
    let settings: AccountSettings
    /// The streams and exports of a disabled or reset account are ended.
    let streams: OpenStreams

    package init(store: Store, generations: Generations, passwords: PasswordWork, settings: AccountSettings, streams: OpenStreams) {
        self.store = store
        self.generations = generations
        self.passwords = passwords
        self.settings = settings
        self.streams = streams
    }

    /// `GET /api/users`: every account, oldest first, without password hashes.
    package func list(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        try AccountRules.requireAdmin(caller, settings)
        return .json(ItemsResource(items: try store.users().map(UserResource.init)))
    }

    /// `POST /api/users {"username","password","role"?,"display_name"?}`: 201 the user. The role
    /// defaults to member and the display name to the username; a username taken in any case is 409.
    package func create(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        try AccountRules.requireAdminSession(caller, settings)
        let body = try JSONBody(request)
        let username = try AccountRules.username(try body.requiredString("username"))
        let password = try AccountRules.password(try body.requiredString("password"), field: "password")
        let role = try body.string("role").map(AccountRules.role) ?? .member
        let displayName = try body.string("display_name").map(AccountRules.displayName) ?? username
        // Checked before the Argon2id work, so a taken name costs nothing; the store checks again.
        if try store.user(username: username) != nil {
            throw StoreError.conflict("the username \(username) is taken")
        }
        let hash = try await passwords.hash(password)
        let user = try store.createUser(username: username, displayName: displayName, role: role, passwordHash: hash)
        Audit.record("user_created", ["username": user.username, "user_id": user.id, "role": role.rawValue,
                                      "by": caller.user.username])
        return .json(UserResource(user), status: 201)
    }

    /// `PATCH /api/users/{id} {"role"?,"disabled"?,"password"?,"display_name"?}`: the user. Disabling
    /// ends the user's sessions and tokens (in the store's transaction) and stops their live replies;
    /// a new password ends their sessions (but the caller's own) and their API tokens. The last enabled admin cannot be
    /// demoted or disabled (409 `conflict`).
    package func update(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        try AccountRules.requireAdminSession(caller, settings)
        let id = try request.parameter("id")
        let body = try JSONBody(request)
        let role = try body.string("role").map(AccountRules.role)
        let disabled = try body.bool("disabled")
        let password = try body.string("password").map { (value) throws(HTTPError) in
            try AccountRules.password(value, field: "password")
        }
        let displayName = try body.string("display_name").map(AccountRules.displayName)
        guard let before = try store.user(id: id) else { throw Self.userNotFound }
        var hash: String?
        if let password { hash = try await passwords.hash(password) }
        guard let user = try store.updateUser(id: id, role: role, disabled: disabled, passwordHash: hash,
                                              displayName: displayName) else {
            throw Self.userNotFound
        }
        if hash != nil || disabled != nil {
            // The old hash may have been the last at an old cost that failed sign-ins are padded to,
            // or an enabled account brings its cost back.
            passwords.accountsChanged(try store.users())
        }
        var stopped = 0
        if disabled == true {
            stopped = await generations.stopAll(owner: id)
            streams.end(of: id)
        } else if hash != nil {
            // A reset is what an admin does to a compromised account: its sessions and its API tokens
            // end (the admin's own session stays when resetting their own password).
            try store.deleteSessions(userID: id, keeping: id == caller.userID ? caller.sessionID : nil)
            try store.deleteTokens(userID: id)
            let kept = id == caller.userID ? caller.credential : nil
            streams.end(of: id) { $0 != .proxy && $0 != kept }
        }
        let changed = [role.map { "role=\($0.rawValue)" }, disabled.map { "disabled=\($0)" },
                       hash.map { _ in "password" }, displayName.map { _ in "display_name" }].compactMap { $0 }
        if disabled == true && !before.disabled {
            Audit.record("user_disabled", ["username": user.username, "user_id": id, "by": caller.user.username,
                                           "replies_stopped": String(stopped)])
        } else if disabled == false && before.disabled {
            Audit.record("user_enabled", ["username": user.username, "user_id": id, "by": caller.user.username])
        }
        if !changed.isEmpty {
            Audit.record("user_changed", ["username": user.username, "user_id": id,
                                          "fields": changed.joined(separator: ","), "by": caller.user.username])
        }
        return .json(UserResource(user))
    }

    /// `GET /api/users/{id}/usage`: counts only, never a title or content.
    package func usage(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        try AccountRules.requireAdmin(caller, settings)
        let id = try request.parameter("id")
        guard try store.user(id: id) != nil else { throw Self.userNotFound }
        return .json(UsageResource(userID: id, try store.usage(userID: id), tokens: try store.tokenTotals(userID: id)))
    }

    private static let userNotFound = HTTPError(status: 404, code: "not_found", message: "No such user.")
}
