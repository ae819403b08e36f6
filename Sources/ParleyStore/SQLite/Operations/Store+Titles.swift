extension Store {
    /// Gives a conversation the title made from its first exchange, only while it still has the
    /// default title: a title set by hand (before or while this one was being made) is never
    /// replaced. Does not change `updated_at` (naming is not an edit). Returns the conversation as
    /// stored, or nil when it kept its title or is gone. Write transaction.
    public func setGeneratedTitle(conversationID: String, title: String) throws(StoreError) -> Conversation? {
        try write { (writer, _) throws(StoreError) in
            try writer.database.queryFirst(
                "UPDATE conversations SET title = ? WHERE id = ? AND title = ? RETURNING \(Conversation.columns)",
                [.text(title), .text(conversationID), .text(Store.defaultTitle)], Conversation.init(row:))
        }
    }
}
