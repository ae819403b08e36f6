import ParleyStore

/// Module ParleyAPI: the vocabulary every feature of the API shares (the caller, errors as answers,
/// JSON bodies, field rules, resources, open-stream caps). It must never know any one feature: no
/// handler, route or feature rule lives here.
///
/// Who is asking, as every API handler sees it: resolved once per request by `Authenticator`.
/// Handlers scope every store query by `userID`.
package struct Caller: Sendable {
    package enum Credential: Sendable, Equatable {
        /// Local mode's implicit user.
        case local
        case session(id: String)
        case apiToken(id: String)
        /// Signed in by a trusted reverse proxy's header.
        case proxy
    }

    package let user: User
    package let credential: Credential

    package init(user: User, credential: Credential) {
        self.user = user
        self.credential = credential
    }

    package var userID: String { user.id }
    package var isAdmin: Bool { user.role == .admin }

    /// Local mode's one user. It is not stored: it only owns conversations.
    package static let local = Caller(
        user: User(id: User.localID, username: "local", displayName: "You", role: .admin, disabled: false,
                   passwordHash: nil, createdAt: .init(timeIntervalSince1970: 0)),
        credential: .local)
}
