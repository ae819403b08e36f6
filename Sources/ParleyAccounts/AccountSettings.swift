import Foundation

/// How Parley knows who is asking. Local mode has one implicit user and no sign-in; team mode has
/// accounts, sessions and API tokens, and answers 401 to anyone else.
public struct AccountSettings: Sendable, Equatable {
    public enum Mode: String, Sendable {
        case local
        case team
    }

    public var mode: Mode = .local
    /// Created as the first admin when the user table is empty (PARLEY_ADMIN_USER / _PASSWORD).
    public var bootstrapAdmin: (username: String, password: String)?
    /// A session unused this long is over.
    public var sessionIdle: TimeInterval = 7 * 86_400
    /// A session is over this long after sign-in, however much it is used.
    public var sessionLifetime: TimeInterval = 30 * 86_400
    /// nil: `Secure` when the request came over https (per `X-Forwarded-Proto` from a trusted proxy).
    public var secureCookie: Bool?
    /// Argon2id memory per hash, in KiB (libsodium's interactive cost by default).
    public var passwordMemoryKiB = 65_536
    /// Failed sign-ins allowed per username and per client address within `loginWindow`.
    public var loginAttempts = 10
    public var loginWindow: TimeInterval = 15 * 60
    /// PARLEY_AUTH_HEADER: a request from a trusted proxy carrying this header is signed in as the
    /// username it names (created as a member on first sight); nil: no proxy sign-in.
    public var proxyHeader: String?
    /// The clock sessions' idle time and lifetime are judged by: the system's, or a test's that it
    /// moves forward instead of sleeping. Not a setting, so `==` ignores it.
    public var now: @Sendable () -> Date = { Date() }

    public init() {}

    public static func == (lhs: AccountSettings, rhs: AccountSettings) -> Bool {
        lhs.mode == rhs.mode && lhs.bootstrapAdmin?.username == rhs.bootstrapAdmin?.username
            && lhs.bootstrapAdmin?.password == rhs.bootstrapAdmin?.password && lhs.sessionIdle == rhs.sessionIdle
            && lhs.sessionLifetime == rhs.sessionLifetime && lhs.secureCookie == rhs.secureCookie
            && lhs.passwordMemoryKiB == rhs.passwordMemoryKiB && lhs.loginAttempts == rhs.loginAttempts
            && lhs.loginWindow == rhs.loginWindow && lhs.proxyHeader == rhs.proxyHeader
    }
}
