/// Where `Store.appendTurn` hangs the new user message.
public enum TurnPlacement: Sendable, Equatable {
    /// Under the conversation's current leaf (a root if the conversation is empty): a plain reply.
    case afterCurrentLeaf
    /// As a new root: editing the first message of a conversation.
    case root
    /// Under this message of the conversation: editing a later user message means placing the
    /// new one under the old one's parent.
    case under(messageID: String)
}
