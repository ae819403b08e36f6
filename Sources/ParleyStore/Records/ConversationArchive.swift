/// A conversation with every message of its tree (all branches), as export writes it and import
/// reads it. Messages link by `parentID` only; `MessageTree` checks that they form a tree.
public struct ConversationArchive: Sendable, Equatable {
    public var conversation: Conversation
    /// In creation order (export); any order for import, parents are found by id.
    public var messages: [Message]
    /// For import: the files each message (by its id in `messages`) is to show, in order, as ids of the
    /// importing owner's files. Recorded in the import's own transaction, so a conversation never
    /// exists without its attachments. Export leaves it empty (`FileStore.messageFiles` reads them).
    public var files: [String: [String]]

    public init(conversation: Conversation, messages: [Message], files: [String: [String]] = [:]) {
        self.conversation = conversation
        self.messages = messages
        self.files = files
    }
}
