import Foundation

/// A sign-in session or an API token as listed to its owner: never the secret, only its metadata.
public struct Credential: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case session
        case apiToken
    }

    public let id: String
    public let kind: Kind
    public let userID: String
    /// The token's name, or the session's user agent.
    public let label: String
    public let createdAt: Date
    public let lastUsedAt: Date?

    public init(id: String, kind: Kind, userID: String, label: String, createdAt: Date, lastUsedAt: Date?) {
        self.id = id
        self.kind = kind
        self.userID = userID
        self.label = label
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}
