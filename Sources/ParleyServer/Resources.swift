import Foundation
import ParleyStore

/// The JSON shape of a conversation in the API.
struct ConversationResource: Encodable {
    let id: String
    let title: String
    let model: String?
    let systemPrompt: String?
    let currentLeafID: String?
    let createdAt: String
    let updatedAt: String
    let pinned: Bool
    let archived: Bool
    var messages: [MessageResource]?

    init(_ conversation: Conversation, messages: [MessageResource]? = nil) {
        id = conversation.id
        title = conversation.title
        model = conversation.model
        systemPrompt = conversation.systemPrompt
        currentLeafID = conversation.currentLeafID
        createdAt = Timestamp.format(conversation.createdAt)
        updatedAt = Timestamp.format(conversation.updatedAt)
        pinned = conversation.pinned
        archived = conversation.archived
        self.messages = messages
    }

    enum CodingKeys: String, CodingKey {
        case id, title, model, messages, pinned, archived
        case systemPrompt = "system_prompt"
        case currentLeafID = "current_leaf_id"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    /// Absent values are written as null: clients see every field of the documented shape.
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(model, forKey: .model)
        try container.encode(systemPrompt, forKey: .systemPrompt)
        try container.encode(currentLeafID, forKey: .currentLeafID)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(pinned, forKey: .pinned)
        try container.encode(archived, forKey: .archived)
        try container.encodeIfPresent(messages, forKey: .messages)
    }
}

/// The JSON shape of a message in the API. `usage` is the stored JSON object, passed through;
/// `html` is the HTML stored when the message was written (user) or finished (assistant), so
/// history never renders Markdown again.
struct MessageResource: Encodable {
    let message: Message
    let siblings: SiblingInfo?

    init(_ message: Message, siblings: SiblingInfo? = nil) {
        self.message = message
        self.siblings = siblings
    }

    var html: String? { message.status == .streaming ? nil : message.html }

    enum CodingKeys: String, CodingKey {
        case id, role, content, reasoning, status, model, usage, siblings, html, error
        case conversationID = "conversation_id"
        case parentID = "parent_id"
        case finishReason = "finish_reason"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    struct Siblings: Encodable {
        let index: Int
        let count: Int
        let ids: [String]
    }

    struct ErrorInfo: Encodable {
        let code: String
        let message: String
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(message.id, forKey: .id)
        try container.encode(message.conversationID, forKey: .conversationID)
        try container.encode(message.parentID, forKey: .parentID)
        try container.encode(message.role.rawValue, forKey: .role)
        try container.encode(message.content, forKey: .content)
        try container.encode(message.reasoning, forKey: .reasoning)
        try container.encode(message.status.rawValue, forKey: .status)
        try container.encode(message.finishReason, forKey: .finishReason)
        try container.encode(message.model, forKey: .model)
        try container.encode(RawJSON(message.usage), forKey: .usage)
        try container.encode(Timestamp.format(message.createdAt), forKey: .createdAt)
        try container.encode(Timestamp.format(message.updatedAt), forKey: .updatedAt)
        if let siblings {
            try container.encode(Siblings(index: siblings.index, count: siblings.count, ids: siblings.ids),
                                 forKey: .siblings)
        }
        if let html {
            try container.encode(html, forKey: .html)
        }
        if let code = message.errorCode {
            try container.encode(ErrorInfo(code: code, message: message.errorMessage ?? ""), forKey: .error)
        }
    }
}

/// Stored JSON text (usage) re-emitted as JSON, or null.
struct RawJSON: Encodable {
    let value: Any?

    init(_ text: String?) {
        value = text.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) }
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        guard let object = value as? [String: Any] else {
            try container.encodeNil()
            return
        }
        var ints: [String: Int] = [:]
        for (key, number) in object {
            if let number = number as? Int { ints[key] = number }
        }
        try container.encode(ints)
    }
}

/// ISO-8601 timestamps with milliseconds, in UTC (`2026-11-29T14:20:00.123Z`).
enum Timestamp {
    static func format(_ date: Date) -> String {
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(millis / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900,
                      Int(parts.tm_mon) + 1, Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min),
                      Int(parts.tm_sec), Int(millis % 1000))
    }
}
