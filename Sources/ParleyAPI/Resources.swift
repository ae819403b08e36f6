import Foundation
import ParleyPrimitives
import ParleyStore

/// The JSON shape of a conversation in the API.
package struct ConversationResource: Encodable {
    let id: String
    let title: String
    let model: String?
    let systemPrompt: String?
    let currentLeafID: String?
    let createdAt: String
    let updatedAt: String
    let settings: GenerationSettings
    /// Tokens of every finished reply run of the conversation (all branches).
    let usage: TokenUsage
    let pinned: Bool
    let archived: Bool
    /// Made by `POST /api/import` (the page marks it).
    let imported: Bool
    /// The tools its replies may call (tool ids and `<server>/*`).
    let tools: [String]
    var messages: [MessageResource]?

    package init(_ conversation: Conversation, messages: [MessageResource]? = nil, usage: TokenUsage = TokenUsage()) {
        settings = conversation.settings
        self.usage = usage
        id = conversation.id
        title = conversation.title
        model = conversation.model
        systemPrompt = conversation.systemPrompt
        currentLeafID = conversation.currentLeafID
        createdAt = Timestamp.format(conversation.createdAt)
        updatedAt = Timestamp.format(conversation.updatedAt)
        pinned = conversation.pinned
        archived = conversation.archived
        imported = conversation.imported
        tools = conversation.tools
        self.messages = messages
    }

    enum CodingKeys: String, CodingKey {
        case id, title, model, messages, temperature, usage, pinned, archived, imported, tools
        case topP = "top_p"
        case maxTokens = "max_tokens"
        case systemPrompt = "system_prompt"
        case currentLeafID = "current_leaf_id"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    /// Absent values are written as null: clients see every field of the documented shape.
    package func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(model, forKey: .model)
        try container.encode(systemPrompt, forKey: .systemPrompt)
        try container.encode(currentLeafID, forKey: .currentLeafID)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(settings.temperature, forKey: .temperature)
        try container.encode(settings.topP, forKey: .topP)
        try container.encode(settings.maxTokens, forKey: .maxTokens)
        try container.encode(TokenUsageResource(usage), forKey: .usage)
        try container.encode(pinned, forKey: .pinned)
        try container.encode(archived, forKey: .archived)
        try container.encode(imported, forKey: .imported)
        try container.encode(tools, forKey: .tools)
        try container.encodeIfPresent(messages, forKey: .messages)
    }
}

/// The JSON shape of a message in the API. `usage` is the stored usage (`ReplyUsage`);
/// `html` is the HTML stored when an assistant reply finished, so history never renders Markdown
/// again. A user or system message has no `html` key at all: it is shown exactly as typed (issue 18),
/// whatever an older version or an import stored.
package struct MessageResource: Encodable {
    let message: Message
    let siblings: SiblingInfo?
    /// The files a user message carries, shown as `file` parts after its text.
    let files: [StoredFile]

    package init(_ message: Message, siblings: SiblingInfo? = nil, files: [StoredFile] = []) {
        self.message = message
        self.siblings = siblings
        self.files = files
    }

    var html: String? { message.role == .assistant && message.status != .streaming ? message.html : nil }

    enum CodingKeys: String, CodingKey {
        case id, role, content, reasoning, status, model, usage, siblings, html, error, parts
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

    package struct ErrorInfo: Encodable {
        let code: String
        let message: String

        package init(code: String, message: String) {
            self.code = code
            self.message = message
        }
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(message.id, forKey: .id)
        try container.encode(message.conversationID, forKey: .conversationID)
        try container.encode(message.parentID, forKey: .parentID)
        try container.encode(message.role.rawValue, forKey: .role)
        try container.encode(message.content, forKey: .content)
        try container.encode(message.reasoning, forKey: .reasoning)
        try container.encode(message.status.rawValue, forKey: .status)
        try container.encode(message.finishReason?.rawValue, forKey: .finishReason)
        try container.encode(message.model, forKey: .model)
        try container.encode(ReplyUsage(message.usage), forKey: .usage)
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
            try container.encode(ErrorInfo(code: code.rawValue, message: message.errorMessage ?? ""), forKey: .error)
        }
        // The reply's reasoning, text and tool calls in order (a user message: its one text part, no HTML).
        let rendered = message.role == .assistant && message.status != .streaming
        let fileParts = files.map { file -> JSON in
            .object(["type": .string("file"), "file_id": .string(file.id), "filename": .string(file.filename),
                     "media_type": .string(file.mediaType), "kind": .string(file.kind.rawValue)])
        }
        try container.encode(message.parts.map { (rendered ? $0 : $0.withoutHTML).json } + fileParts, forKey: .parts)
    }
}

/// ISO-8601 timestamps with milliseconds, in UTC (`2026-11-29T14:20:00.123Z`).
package enum Timestamp {
    package static func format(_ date: Date) -> String {
        // Nearest, not down: a stamp stored as whole milliseconds comes back as a Double a hair below them.
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(millis / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        // Written digit by digit: `String(format:)` cost 4% of a start's CPU (every message
        // resource carries two stamps).
        var text = ""
        text.reserveCapacity(24)
        func append(_ value: Int, digits: Int) {
            var divisor = 1
            for _ in 1..<digits { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                text.unicodeScalars.append(Unicode.Scalar(UInt8(48 + rest / divisor % 10)))
                rest %= divisor
                divisor /= 10
            }
        }
        append(Int(parts.tm_year) + 1900, digits: 4)
        text += "-"
        append(Int(parts.tm_mon) + 1, digits: 2)
        text += "-"
        append(Int(parts.tm_mday), digits: 2)
        text += "T"
        append(Int(parts.tm_hour), digits: 2)
        text += ":"
        append(Int(parts.tm_min), digits: 2)
        text += ":"
        append(Int(parts.tm_sec), digits: 2)
        text += "."
        append(Int(millis % 1000), digits: 3)
        text += "Z"
        return text
    }
}
