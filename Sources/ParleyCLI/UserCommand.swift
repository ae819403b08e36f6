import Foundation
import ParleyAccounts
import ParleyAuth
import ParleyServer
import ParleyStore

/// `parley user …`: account management on the database file, with or without a running server
/// (SQLite in WAL mode lets both write; a disabled user's sessions and tokens end at once, though
/// replies already streaming in a running server run to their end).
public enum UserCommand: Sendable, Equatable {
    /// `user add NAME [--admin]`: the password is read from standard input, or generated and printed once.
    case add(username: String, admin: Bool)
    /// `user passwd NAME`: a new password, read or generated like `add`.
    case passwd(username: String)
    case disable(username: String)
    case enable(username: String)
    case list

    /// Parses what follows `parley user`; nil with a usage line when it makes no sense.
    public static func parse(_ operands: [String], switches: Set<String>) -> Result<UserCommand, UsageError> {
        let usage = UsageError(
            "usage: parley user add NAME [--admin] | passwd NAME | disable NAME | enable NAME | list")
        guard let verb = operands.first else { return .failure(usage) }
        let names = Array(operands.dropFirst())
        if verb == "list" { return names.isEmpty ? .success(.list) : .failure(usage) }
        guard names.count == 1, let name = names.first, !name.isEmpty else { return .failure(usage) }
        switch verb {
        case "add": return .success(.add(username: name, admin: switches.contains("--admin")))
        case "passwd": return .success(.passwd(username: name))
        case "disable": return .success(.disable(username: name))
        case "enable": return .success(.enable(username: name))
        default: return .failure(usage)
        }
    }

    /// A one-line reason the command cannot run (exit 2).
    public struct UsageError: Error, Equatable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Runs against `store`. `password` gives standard input's first line (nil or empty: generate one).
    /// Returns the lines to print; throws `UsageError` for an unknown user, a taken name or a short password.
    public func run(store: Store, hasher: PasswordHasher, password: () -> String?) throws -> [String] {
        do {
            return try perform(store: store, hasher: hasher, password: password)
        } catch StoreError.conflict(let why) {
            throw UsageError(why)
        }
    }

    /// Runs commands on the configured store (`PARLEY_DATABASE_URL` or `PARLEY_DB`) with the configured password cost.
    public struct Runner {
        let configuration: ParleyConfiguration

        public init(configuration: ParleyConfiguration) {
            self.configuration = configuration
        }

        public func run(_ command: UserCommand, password: () -> String?) throws -> [String] {
            let store = try configuration.openStore()
            let hasher = PasswordHasher(operations: PasswordHasher.interactive.operations,
                                        memoryBytes: configuration.accounts.passwordMemoryKiB * 1024)
            return try command.run(store: store, hasher: hasher, password: password)
        }
    }

    private func perform(store: Store, hasher: PasswordHasher, password: () -> String?) throws -> [String] {
        switch self {
        case .list:
            return try store.users().map { user in
                "\(user.username)\t\(user.role.rawValue)\(user.disabled ? "\tdisabled" : "")"
            }
        case .add(let username, let admin):
            // The API's rule for names, so the CLI and the admin screen accept the same ones.
            do {
                _ = try AccountRules.username(username)
            } catch {
                throw UsageError(error.message)
            }
            let (secret, shown) = try Self.password(password)
            _ = try store.createUser(username: username, displayName: username, role: admin ? .admin : .member,
                                     passwordHash: try hasher.hash(secret))
            Audit.record("user_created", ["username": username, "role": admin ? "admin" : "member", "by": "cli"])
            return ["added \(username)" + (admin ? " (admin)" : "")] + shown
        case .passwd(let username):
            let user = try Self.existing(username, store)
            let (secret, shown) = try Self.password(password)
            _ = try store.updateUser(id: user.id, passwordHash: try hasher.hash(secret))
            try store.deleteSessions(userID: user.id)
            Audit.record("password_changed", ["username": username, "by": "cli"])
            return ["new password for \(username); their sessions have ended"] + shown
        case .disable(let username):
            _ = try store.updateUser(id: try Self.existing(username, store).id, disabled: true)
            Audit.record("user_disabled", ["username": username, "by": "cli"])
            return ["disabled \(username); their sessions and tokens have ended"]
        case .enable(let username):
            _ = try store.updateUser(id: try Self.existing(username, store).id, disabled: false)
            Audit.record("user_enabled", ["username": username, "by": "cli"])
            return ["enabled \(username)"]
        }
    }

    private static func existing(_ username: String, _ store: Store) throws -> User {
        guard let user = try store.user(username: username) else { throw UsageError("no user \(username)") }
        return user
    }

    /// The password given on standard input, or a generated one (then printed, once).
    private static func password(_ read: () -> String?) throws -> (String, [String]) {
        if let given = read(), !given.isEmpty {
            do {
                _ = try AccountRules.password(given, field: "password")
            } catch {
                throw UsageError(error.message)
            }
            return (given, [])
        }
        let generated = String(SecretToken.generate().prefix(20))
        return (generated, ["password: \(generated)  (shown once)"])
    }
}
