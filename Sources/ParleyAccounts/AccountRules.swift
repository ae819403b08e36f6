import ParleyAPI
import ParleyAuth
import ParleyHTTP
import ParleyStore

/// The rules for the fields of accounts and API tokens, in one place, so creating a user, changing
/// one and changing one's own password accept exactly the same values. Each failure is a 400
/// `invalid_request` naming the field. Nothing is trimmed or changed: what is accepted is stored.
package enum AccountRules {
    static let maxUsernameCharacters = 64
    /// A name a trusted proxy signs in may be as long as an e-mail address.
    static let maxProxyUsernameCharacters = 254
    static let maxDisplayNameCharacters = 100
    static let maxTokenNameCharacters = 100
    /// Argon2id takes any length, but a multi-megabyte "password" is only work for the server.
    static let maxPasswordBytes = 1024

    /// Accounts, sessions and tokens exist in team mode only; local mode answers their routes like
    /// unknown ones.
    static func requireTeamMode(_ settings: AccountSettings) throws(HTTPError) {
        guard settings.mode == .team else {
            throw HTTPError(status: 404, code: "not_found",
                            message: "Accounts exist only in team mode (PARLEY_AUTH=on enables them).")
        }
    }

    /// Changing credentials (password, tokens, sessions) needs a signed-in person, not an API token:
    /// a leaked token must not be able to mint new tokens or revoke the ones that would stop it.
    static func requireSignedInPerson(_ caller: Caller) throws(HTTPError) {
        if case .apiToken = caller.credential {
            throw HTTPError(status: 403, code: "session_required",
                            message: "Tokens, sessions and passwords are managed from a signed-in session, not with an API token.")
        }
    }

    /// Admin routes: team mode, then the caller's role (a member gets 403 whatever the id).
    static func requireAdmin(_ caller: Caller, _ settings: AccountSettings) throws(HTTPError) {
        try requireTeamMode(settings)
        guard caller.isAdmin else { throw APIErrors.forbidden }
    }

    /// Admin routes that change accounts (create, and every `PATCH /api/users/{id}`, even a display
    /// name alone): an admin, signed in as a person. A leaked admin token could otherwise make itself
    /// an admin account, or reset the real admin's password and lock them out. Reading the users and
    /// their usage stays open to an admin's token, for scripts.
    static func requireAdminSession(_ caller: Caller, _ settings: AccountSettings) throws(HTTPError) {
        try requireAdmin(caller, settings)
        if case .apiToken = caller.credential {
            throw HTTPError(status: 403, code: "session_required",
                            message: "Accounts are created and changed from a signed-in session, not with an API token.")
        }
    }

    /// Sessions a user may hold; signing in past it ends the least recently used.
    static let maxSessionsPerUser = 50
    /// API tokens a user may hold (409 past it: revoke one first).
    static let maxTokensPerUser = 100

    /// Whether any account (made here or signed in through the proxy header) could have this name:
    /// 1–254 ASCII letters, digits and `. - _ @ +`. Sign-in counts and logs nothing else by name, and
    /// it is the rule for a name in the proxy header (`ProxyUsername`).
    static func isPlausibleUsername(_ value: String) -> Bool {
        isUsername(value, maxCharacters: maxProxyUsernameCharacters, punctuation: ".-_@+")
    }

    /// 1–64 ASCII letters, digits and `. - _ @`. ASCII only: SQLite's NOCASE folds ASCII letters
    /// alone, so "taken, in any case" holds only for them, and look-alike letters from other
    /// scripts cannot pose as another user's name.
    package static func username(_ value: String) throws(HTTPError) -> String {
        guard isUsername(value, maxCharacters: maxUsernameCharacters, punctuation: ".-_@") else {
            throw invalid("'username' must be 1 to \(maxUsernameCharacters) characters: ASCII letters, digits, "
                          + "'.', '-', '_' or '@'.")
        }
        return value
    }

    /// At least `PasswordHasher.minimumLength` characters, at most `maxPasswordBytes` bytes of UTF-8,
    /// no U+0000. `field` is the name the client used (`password`, `new`).
    package static func password(_ value: String, field: String) throws(HTTPError) -> String {
        guard value.count >= PasswordHasher.minimumLength else {
            throw invalid("'\(field)' must be at least \(PasswordHasher.minimumLength) characters.")
        }
        guard value.utf8.count <= maxPasswordBytes else {
            throw invalid("'\(field)' must be at most \(maxPasswordBytes) bytes.")
        }
        try refuseNUL(value, field: field)
        return value
    }

    /// `admin` or `member`.
    static func role(_ value: String) throws(HTTPError) -> User.Role {
        guard let role = User.Role(rawValue: value) else {
            throw invalid("'role' must be \"admin\" or \"member\".")
        }
        return role
    }

    /// A display name: not blank, at most 100 characters (code points), no U+0000.
    static func displayName(_ value: String) throws(HTTPError) -> String {
        try label(value, field: "display_name", limit: maxDisplayNameCharacters)
    }

    /// An API token's name: not blank, at most 100 characters (code points), no U+0000.
    static func tokenName(_ value: String) throws(HTTPError) -> String {
        try label(value, field: "name", limit: maxTokenNameCharacters)
    }

    /// The one username rule, in its two widths (made here; named by a proxy, which adds `+`):
    /// 1 to `maxCharacters` ASCII letters, digits and `punctuation` (all ASCII, one byte each).
    private static func isUsername(_ value: String, maxCharacters: Int, punctuation: String) -> Bool {
        (1...maxCharacters).contains(value.utf8.count) && value.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || punctuation.utf8.contains(byte)
        }
    }

    private static func label(_ value: String, field: String, limit: Int) throws(HTTPError) -> String {
        try refuseNUL(value, field: field)
        guard value.contains(where: { !$0.isWhitespace }) else {
            throw invalid("'\(field)' must contain more than white space.")
        }
        guard value.unicodeScalars.count <= limit else {
            throw invalid("'\(field)' is longer than \(limit) characters.")
        }
        return value
    }

    private static func refuseNUL(_ value: String, field: String) throws(HTTPError) {
        guard !value.utf8.contains(0) else { throw invalid("'\(field)' must not contain U+0000.") }
    }

    private static func invalid(_ message: String) -> HTTPError {
        HTTPError(status: 400, code: "invalid_request", message: message)
    }
}
