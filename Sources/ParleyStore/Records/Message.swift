import Foundation
import ParleyPrimitives
import ParleyOutcome

/// One node of a conversation's tree. Siblings (same parent) are alternative versions: edits of a
/// user message, regenerations of an assistant reply.
public struct Message: Sendable, Equatable {
    public let id: String
    public let conversationID: String
    /// nil for a root (the first message of a branch).
    public let parentID: String?
    public let role: Role
    public var content: String
    /// The model's reasoning before its answer (plain text, "" when it gave none). Shown, stored,
    /// never sent back upstream as context.
    public var reasoning: String
    public var status: MessageStatus
    public var finishReason: FinishReason?
    public var model: String?
    /// The run's token usage (the provider's, or the store's estimate); nil while it streams.
    public var usage: ReplyTokens?
    public var errorCode: ReplyErrorCode?
    public var errorMessage: String?
    /// Final rendered HTML; set when a message finishes, cleared when it resumes streaming.
    public var html: String?
    /// The reply's reasoning, text and tool calls in order (migration 12). `content` is its text parts
    /// joined, `html` their renders joined. A message stored without parts has the parts its text gives.
    public var parts: [MessagePart]
    /// Strictly increasing across the store, so it orders siblings in creation order.
    public let createdAt: Date
    public var updatedAt: Date

    public init(
        id: String, conversationID: String, parentID: String?, role: Role, content: String,
        reasoning: String = "", status: MessageStatus, finishReason: FinishReason?, model: String?, usage: ReplyTokens?,
        errorCode: ReplyErrorCode?, errorMessage: String?, html: String?, createdAt: Date, updatedAt: Date,
        parts: [MessagePart]? = nil
    ) {
        self.id = id
        self.conversationID = conversationID
        self.parentID = parentID
        self.role = role
        self.content = content
        self.reasoning = reasoning
        self.status = status
        self.finishReason = finishReason
        self.model = model
        self.usage = usage
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.html = html
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.parts = parts ?? Self.textParts(content: content, reasoning: reasoning, html: html)
    }

    /// The parts of a message that has only text: its reasoning (when any) and its text.
    public static func textParts(content: String, reasoning: String, html: String?) -> [MessagePart] {
        var parts: [MessagePart] = []
        if !reasoning.isEmpty { parts.append(.reasoning(reasoning)) }
        if !content.isEmpty || reasoning.isEmpty { parts.append(.text(content, html: html)) }
        return parts
    }

    /// The tool calls among the parts, in order.
    public var toolCalls: [ToolCallPart] { parts.compactMap(\.toolCall) }

    /// Whether its parts say more than its text does (tool calls, surfaces, an action): then they are stored.
    public var hasOwnParts: Bool {
        parts.contains { part in
            switch part {
            case .text, .reasoning: false
            case .toolCall, .surface, .action: true
            }
        }
    }

    /// The A2UI messages of its surface parts, in order (what a surface's fold over a branch reads).
    public var surfaceMessages: [JSON] { parts.compactMap(\.surface).flatMap(\.messages) }

    // MARK: - Row decoding

    /// The column list every message query selects, in the order `init(row:)` reads.
    static let columns = """
        id, conversation_id, parent_id, role, content, status, finish_reason, model, usage, \
        error_code, error_message, html, created_at, updated_at, reasoning, parts
        """

    /// `columns` qualified with a table alias, for joins.
    static func columns(alias: String) -> String {
        columns.split(separator: ",")
            .map { "\(alias).\($0.trimmingCharacters(in: .whitespacesAndNewlines))" }
            .joined(separator: ", ")
    }

    init(row: Row) throws(StoreError) {
        let roleText = row.text(3)
        let statusText = row.text(5)
        guard let role = Role(rawValue: roleText) else {
            throw StoreError.corrupt("unknown message role '\(roleText)'")
        }
        guard let status = MessageStatus(rawValue: statusText) else {
            throw StoreError.corrupt("unknown message status '\(statusText)'")
        }
        self.init(
            id: row.text(0), conversationID: row.text(1), parentID: row.optionalText(2),
            role: role, content: row.text(4), reasoning: row.text(14), status: status, finishReason: row.optionalText(6).map(FinishReason.init(rawValue:)),
            model: row.optionalText(7), usage: ReplyTokens(stored: row.optionalText(8)), errorCode: row.optionalText(9).map(ReplyErrorCode.init(rawValue:)),
            errorMessage: row.optionalText(10), html: row.optionalText(11),
            createdAt: Date(millisecondsSince1970: row.int64(12)),
            updatedAt: Date(millisecondsSince1970: row.int64(13)),
            parts: row.optionalText(15).flatMap(MessagePart.parts(storedText:)))
    }
}
