import Foundation
import ParleyAPI
import ParleyPrimitives
import ParleyStore

/// A conversation as the export format writes it (docs/api.md "Export and import"): its settings
/// (generation settings included) and every message of its tree, flat, each with `id` and `parent_id`, so any tool can rebuild the
/// tree. `ImportDocument` reads the same shape back.
struct ConversationExport: Encodable {
    /// The format's version, `parley_export` at the top of every export document.
    static let version = 1

    let archive: ConversationArchive
    /// The files each message shows (`FileStore.messageFiles`): a user message lists their ids.
    var messageFiles: [String: [StoredFile]] = [:]
    /// Whether to write `parley_export` (a document of its own) or not (inside `conversations`).
    let standalone: Bool

    enum CodingKeys: String, CodingKey {
        case id, title, model, pinned, archived, messages, temperature, tools
        case version = "parley_export"
        case topP = "top_p"
        case maxTokens = "max_tokens"
        case systemPrompt = "system_prompt"
        case currentLeafID = "current_leaf_id"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let conversation = archive.conversation
        if standalone { try container.encode(Self.version, forKey: .version) }
        try container.encode(conversation.id, forKey: .id)
        try container.encode(conversation.title, forKey: .title)
        try container.encode(conversation.model, forKey: .model)
        try container.encode(conversation.systemPrompt, forKey: .systemPrompt)
        try container.encode(conversation.settings.temperature, forKey: .temperature)
        try container.encode(conversation.settings.topP, forKey: .topP)
        try container.encode(conversation.settings.maxTokens, forKey: .maxTokens)
        try container.encode(conversation.pinned, forKey: .pinned)
        try container.encode(conversation.archived, forKey: .archived)
        try container.encode(conversation.tools, forKey: .tools)
        try container.encode(conversation.currentLeafID, forKey: .currentLeafID)
        try container.encode(Timestamp.format(conversation.createdAt), forKey: .createdAt)
        try container.encode(Timestamp.format(conversation.updatedAt), forKey: .updatedAt)
        try container.encode(archive.messages.map {
            MessageExport(message: $0, fileIDs: $0.role == .user ? (messageFiles[$0.id] ?? []).map(\.id) : [])
        }, forKey: .messages)
    }

    /// The document's bytes (keys sorted, so two exports of the same data are equal byte for byte).
    func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(self))
    }
}

/// One message in an export: everything stored but the rendered HTML (made again on import). A message
/// with tool calls, surfaces or an action has its `parts` (text parts without HTML).
struct MessageExport: Encodable {
    let message: Message
    /// The ids of the files a user message shows, in order (entries of the conversation's `files`).
    var fileIDs: [String] = []

    enum CodingKeys: String, CodingKey {
        case id, role, content, reasoning, status, model, usage, error, parts, files
        case parentID = "parent_id"
        case finishReason = "finish_reason"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(message.id, forKey: .id)
        try container.encode(message.parentID, forKey: .parentID)
        try container.encode(message.role.rawValue, forKey: .role)
        try container.encode(message.content, forKey: .content)
        try container.encode(message.reasoning, forKey: .reasoning)
        try container.encode(message.status.rawValue, forKey: .status)
        try container.encode(message.finishReason?.rawValue, forKey: .finishReason)
        try container.encode(message.model, forKey: .model)
        try container.encode(ReplyUsage(message.usage), forKey: .usage)
        if let code = message.errorCode {
            try container.encode(MessageResource.ErrorInfo(code: code.rawValue, message: message.errorMessage ?? ""),
                                 forKey: .error)
        } else {
            try container.encodeNil(forKey: .error)
        }
        try container.encode(Timestamp.format(message.createdAt), forKey: .createdAt)
        try container.encode(Timestamp.format(message.updatedAt), forKey: .updatedAt)
        if message.hasOwnParts {
            try container.encode(message.parts.map(\.withoutHTML.json), forKey: .parts)
        }
        if !fileIDs.isEmpty { try container.encode(fileIDs, forKey: .files) }
    }
}
