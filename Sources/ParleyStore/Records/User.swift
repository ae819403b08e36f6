import Foundation

/// A team-mode account. The password hash never leaves the store's callers that verify it; it is
/// not part of any API resource.
public struct User: Sendable, Equatable {
    public enum Role: String, Sendable {
        case admin
        case member
    }

    public let id: String
    /// Unique, compared without case.
    public var username: String
    public var displayName: String
    public var role: Role
    public var disabled: Bool
    /// Argon2id string; nil for users who only sign in through a trusted proxy header.
    public var passwordHash: String?
    public let createdAt: Date

    public init(id: String, username: String, displayName: String, role: Role, disabled: Bool,
                passwordHash: String?, createdAt: Date) {
        self.id = id
        self.username = username
        self.displayName = displayName
        self.role = role
        self.disabled = disabled
        self.passwordHash = passwordHash
        self.createdAt = createdAt
    }

    /// Local mode's one implicit user: owns every conversation made without accounts.
    public static let localID = "local"

    static let columns = "id, username, display_name, role, disabled, password_hash, created_at"

    /// Reads `columns` starting at column `offset` (joins put other columns first).
    init(row: Row, offset: Int32 = 0) {
        self.init(id: row.text(offset), username: row.text(offset + 1), displayName: row.text(offset + 2),
                  role: Role(rawValue: row.text(offset + 3)) ?? .member, disabled: row.int64(offset + 4) != 0,
                  passwordHash: row.optionalText(offset + 5),
                  createdAt: Date(millisecondsSince1970: row.int64(offset + 6)))
    }
}
