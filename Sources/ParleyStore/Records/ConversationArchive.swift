/// A conversation with every message of its tree (all branches), as export writes it and import
/// reads it. Messages link by `parentID` only; `MessageTree` checks that they form a tree.
public struct ConversationArchive: Sendable, Equatable {
    public var conversation: Conversation
    /// In creation order (export); any order for import, parents are found by id.
    public var messages: [Message]

    public init(conversation: Conversation, messages: [Message]) {
        self.conversation = conversation
        self.messages = messages
    }
}
