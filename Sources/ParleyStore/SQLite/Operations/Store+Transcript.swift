import Foundation

/// One finished turn a client brings with it (the earlier turns of an OpenAI-style request), stored
/// as it was given: never generated here, so it has no usage.
public struct TranscriptTurn: Sendable, Equatable {
    public let role: Role
    public let content: String
    /// An assistant turn's content rendered, so history loads never render it again. Ignored for a
    /// user turn: what people typed is shown as typed, never as Markdown.
    public let html: String?

    public init(role: Role, content: String, html: String?) {
        self.role = role
        self.content = content
        self.html = html
    }
}

extension Store {
    // MARK: - Writing a transcript

    /// Appends `turns` as a chain of `complete` messages under the conversation's current leaf, which
    /// then moves to the last of them. The turns must alternate user and assistant, starting with a
    /// user turn when the conversation is empty and with the role the current leaf does not have
    /// otherwise (the tree never holds two user turns in a row); anything else throws `conflict`.
    /// Throws `notFound` for an unknown conversation. Write transaction.
    public func appendTranscript(conversationID: String, turns: [TranscriptTurn]) throws(StoreError) {
        guard !turns.isEmpty else { return }
        guard !turns.contains(where: { $0.role == .system }) else {
            throw StoreError.conflict("a transcript holds user and assistant turns only")
        }
        try write { (writer, now) throws(StoreError) in
            let database = writer.database
            let found = try database.queryFirst(
                "SELECT current_leaf_id FROM conversations WHERE id = ?", [.text(conversationID)]
            ) { row in row.optionalText(0) }
            guard let leaf = found else { throw StoreError.notFound(.conversation(id: conversationID)) }
            var expected = Role.user
            if let leaf {
                let role = try database.queryFirst("SELECT role FROM messages WHERE id = ?", [.text(leaf)]) {
                    Role(rawValue: $0.text(0))
                }
                expected = role == .user ? .assistant : .user
            }
            var parentID = leaf
            for turn in turns {
                guard turn.role == expected else {
                    throw StoreError.conflict("turns must alternate user and assistant, starting with \(expected.rawValue)")
                }
                let message = try insertMessage(
                    database, conversationID: conversationID, parentID: parentID, role: turn.role,
                    content: turn.content, html: turn.role == .assistant ? turn.html : nil, status: .complete, model: nil,
                    createdAt: writer.nextMessageMilliseconds(now: now))
                parentID = message.id
                expected = turn.role == .user ? .assistant : .user
            }
            if let parentID {
                try moveLeaf(of: conversationID, to: parentID, at: writer.nextConversationMilliseconds(now: now),
                             database: database)
            }
        }
    }
}
