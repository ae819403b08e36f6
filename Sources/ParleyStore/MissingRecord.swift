/// What a `StoreError.notFound` did not find, as a value: callers tell a missing conversation from a
/// missing message by its case, never by reading a text. `description` is the text the API shows
/// ("No such conversation abc.").
public enum MissingRecord: Sendable, Equatable, CustomStringConvertible {
    case conversation(id: String)
    case message(id: String)
    /// A message that is not in the given conversation; `assistant` when an assistant message was needed.
    case messageInConversation(id: String, conversationID: String, assistant: Bool)
    /// A tool call that is not in the given message.
    case toolCall(id: String, messageID: String)
    /// An uploaded file (unknown, or another user's: the two are never told apart).
    case file(id: String)

    /// Whether the conversation itself is what is missing (not a message in it).
    public var isConversation: Bool {
        if case .conversation = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .conversation(let id): "conversation \(id)"
        case .message(let id): "message \(id)"
        case .messageInConversation(let id, let conversationID, let assistant):
            "\(assistant ? "assistant message" : "message") \(id) in conversation \(conversationID)"
        case .toolCall(let id, let messageID): "tool call \(id) in message \(messageID)"
        case .file(let id): "file \(id)"
        }
    }
}
