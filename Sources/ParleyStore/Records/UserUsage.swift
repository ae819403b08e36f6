import Foundation

/// How much one account has used Parley, for its admin: counts only, never a title or a word of
/// content.
public struct UserUsage: Sendable, Equatable {
    public let conversations: Int
    /// User and assistant messages, every branch counted.
    public let messages: Int
    public let assistantReplies: Int
    /// The sum of `output_tokens` in the stored usage of the replies whose provider reported it.
    public let outputTokens: Int
    /// The latest change to one of the user's conversations or messages; nil when there is none.
    public let lastActivity: Date?

    public init(conversations: Int, messages: Int, assistantReplies: Int, outputTokens: Int, lastActivity: Date?) {
        self.conversations = conversations
        self.messages = messages
        self.assistantReplies = assistantReplies
        self.outputTokens = outputTokens
        self.lastActivity = lastActivity
    }
}
