import ParleyAPI
import ParleyStore

/// A change to one user's conversations that every tab of that user is told about at once, over its
/// user event stream (`GET /api/events`). Notifications carry ids, titles and statuses, never message
/// text or system prompts: a tab that shows the conversation reads it again, and the log of a user
/// (`UserEventLog`) stays small (a title is at most PARLEY_MAX_TITLE_CHARS).
enum UserNotification: Sendable {
    case conversationCreated(Conversation)
    /// Renamed, model or system prompt changed, or another branch made current.
    case conversationUpdated(Conversation)
    case conversationDeleted(id: String)
    /// A user message was added (send, or edit as a new branch) and its answer started.
    case turn(conversationID: String, userMessageID: String, assistantMessageID: String)
    /// A reply started: the answer of a turn, a regenerated sibling or a continue.
    case replyStarted(conversationID: String, messageID: String)
    /// A reply ended (`status`: complete, stopped, failed, interrupted).
    case replyFinished(conversationID: String, messageID: String, status: MessageStatus)
    /// The user's preferences changed (`PATCH /api/preferences`). It carries nothing (a default system
    /// prompt is not for the log): a tab reads `GET /api/preferences` again.
    case preferencesChanged

    /// The SSE event name.
    var name: String {
        switch self {
        case .conversationCreated: "conversation_created"
        case .conversationUpdated: "conversation_updated"
        case .conversationDeleted: "conversation_deleted"
        case .turn: "turn"
        case .replyStarted: "reply_started"
        case .replyFinished: "reply_finished"
        case .preferencesChanged: "preferences_changed"
        }
    }

    /// `event:`, `data:` and the blank line, without the `id:` line (each stream writes its own).
    var frame: [UInt8] {
        var json = JSONWriter()
        switch self {
        case .conversationCreated(let conversation), .conversationUpdated(let conversation):
            json.object { $0.rawField("conversation", Self.summary(conversation)) }
        case .conversationDeleted(let id):
            json.object { $0.field("conversation_id", id) }
        case .turn(let conversationID, let userMessageID, let assistantMessageID):
            json.object {
                $0.field("conversation_id", conversationID)
                $0.field("user_message_id", userMessageID)
                $0.field("assistant_message_id", assistantMessageID)
            }
        case .replyStarted(let conversationID, let messageID):
            json.object {
                $0.field("conversation_id", conversationID)
                $0.field("message_id", messageID)
            }
        case .replyFinished(let conversationID, let messageID, let status):
            json.object {
                $0.field("conversation_id", conversationID)
                $0.field("message_id", messageID)
                $0.field("status", status.rawValue)
            }
        case .preferencesChanged:
            json.object { _ in }
        }
        return Array("event: \(name)\ndata: \(json.text)\n\n".utf8)
    }

    /// A conversation as the list shows it: `ConversationResource`'s fields without the system prompt.
    private static func summary(_ conversation: Conversation) -> String {
        var json = JSONWriter()
        json.object {
            $0.field("id", conversation.id)
            $0.field("title", conversation.title)
            $0.field("model", conversation.model)
            $0.field("current_leaf_id", conversation.currentLeafID)
            $0.field("created_at", Timestamp.format(conversation.createdAt))
            $0.field("updated_at", Timestamp.format(conversation.updatedAt))
            $0.rawField("pinned", conversation.pinned ? "true" : "false")
            $0.rawField("archived", conversation.archived ? "true" : "false")
            $0.rawField("imported", conversation.imported ? "true" : "false")
        }
        return json.text
    }
}
