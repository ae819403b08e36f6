import Foundation
import ParleyAPI
import ParleyStore

/// `{"items": [...]}`: every account list (sessions, tokens, users), like the conversation list.
struct ItemsResource<Item: Encodable>: Encodable {
    let items: [Item]
}

/// A sign-in session as its owner sees it: never its secret.
struct SessionResource: Encodable {
    let id: String
    let createdAt: String
    let lastUsedAt: String?
    let userAgent: String
    /// The session this request came with.
    let current: Bool

    init(_ session: Credential, current: Bool) {
        id = session.id
        createdAt = Timestamp.format(session.createdAt)
        lastUsedAt = session.lastUsedAt.map(Timestamp.format)
        userAgent = session.label
        self.current = current
    }

    enum CodingKeys: String, CodingKey {
        case id, current
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
        case userAgent = "user_agent"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(lastUsedAt, forKey: .lastUsedAt)
        try container.encode(userAgent, forKey: .userAgent)
        try container.encode(current, forKey: .current)
    }
}

/// An API token as listed: its name and dates, never the secret (only its digest is stored).
/// `token` is set once, in the answer that creates it.
struct TokenResource: Encodable {
    let id: String
    let name: String
    let createdAt: String
    let lastUsedAt: String?
    var token: String?

    init(_ token: Credential, secret: String? = nil) {
        id = token.id
        name = token.label
        createdAt = Timestamp.format(token.createdAt)
        lastUsedAt = token.lastUsedAt.map(Timestamp.format)
        self.token = secret
    }

    enum CodingKeys: String, CodingKey {
        case id, name, token
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encodeIfPresent(token, forKey: .token)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(lastUsedAt, forKey: .lastUsedAt)
    }
}

/// What an admin may know of a user's activity: counts and a date, no titles, no content.
struct UsageResource: Encodable {
    let userID: String
    let conversations: Int
    let messages: Int
    let assistantReplies: Int
    let outputTokens: Int
    let lastActivityAt: String?
    /// Token totals of every reply run (provider usage, or estimates), kept after deletions.
    let tokens: TokenUsage

    init(userID: String, _ usage: UserUsage, tokens: TokenUsage) {
        self.tokens = tokens
        self.userID = userID
        conversations = usage.conversations
        messages = usage.messages
        assistantReplies = usage.assistantReplies
        outputTokens = usage.outputTokens
        lastActivityAt = usage.lastActivity.map(Timestamp.format)
    }

    enum CodingKeys: String, CodingKey {
        case conversations, messages, tokens
        case userID = "user_id"
        case assistantReplies = "assistant_replies"
        case outputTokens = "output_tokens"
        case lastActivityAt = "last_activity_at"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(userID, forKey: .userID)
        try container.encode(conversations, forKey: .conversations)
        try container.encode(messages, forKey: .messages)
        try container.encode(assistantReplies, forKey: .assistantReplies)
        try container.encode(outputTokens, forKey: .outputTokens)
        try container.encode(lastActivityAt, forKey: .lastActivityAt)
        try container.encode(TokenUsageResource(tokens), forKey: .tokens)
    }
}
