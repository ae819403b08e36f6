import Foundation

/// One finished turn a client brings with it (the earlier turns of an OpenAI-style request), stored
/// as it was given: never generated here, so it has no usage.
public struct TranscriptTurn: Sendable, Equatable {
    public let role: Role
    public let content: String
    /// An assistant turn's content rendered, so history loads never render it again. Ignored for a
    /// user turn: what people typed is shown as typed, never as Markdown.
    public let html: String?
    /// An assistant turn's parts when it is more than its text (its tool calls and their results, as an
    /// API client brought them); nil: the parts its text gives. Ignored for a user turn.
    public let parts: [MessagePart]?

    public init(role: Role, content: String, html: String?, parts: [MessagePart]? = nil) {
        self.role = role
        self.content = content
        self.html = html
        self.parts = parts
    }
}

extension Store {
    // MARK: - Writing a transcript

    /// Appends `turns` as a chain of `complete` messages under the conversation's current leaf, which
    /// then moves to the last of them. The turns must alternate user and assistant, starting with a
    /// user turn when the conversation is empty and with the role the current leaf does not have
    /// otherwise (the tree never holds two user turns in a row); anything else throws `conflict`.
    /// Returns the stored messages in order. Throws `notFound` for an unknown conversation. Write transaction.
    @discardableResult
    public func appendTranscript(conversationID: String, turns: [TranscriptTurn]) throws(StoreError) -> [Message] {
        guard !turns.isEmpty else { return [] }
        guard !turns.contains(where: { $0.role == .system }) else {
            throw StoreError.conflict("a transcript holds user and assistant turns only")
        }
        return try write { (writer, now) throws(StoreError) in
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
            var stored: [Message] = []
            for turn in turns {
                guard turn.role == expected else {
                    throw StoreError.conflict("turns must alternate user and assistant, starting with \(expected.rawValue)")
                }
                let message = try insertMessage(
                    database, conversationID: conversationID, parentID: parentID, role: turn.role,
                    content: turn.content, html: turn.role == .assistant ? turn.html : nil, status: .complete, model: nil,
                    createdAt: writer.nextMessageMilliseconds(now: now), parts: turn.role == .assistant ? turn.parts : nil)
                stored.append(message)
                parentID = message.id
                expected = turn.role == .user ? .assistant : .user
            }
            if let parentID {
                try moveLeaf(of: conversationID, to: parentID, at: writer.nextConversationMilliseconds(now: now),
                             database: database)
            }
            return stored
        }
    }

    /// Records the results an API client brings for the tool calls of a reply (the conversation's
    /// current leaf, ended with calls the client runs): each call named in `results` (by Parley's call
    /// id) gets its result and status `complete`. Throws `notFound` for an unknown message or call id,
    /// `conflict` when the message is streaming or not its conversation's current leaf. Write transaction.
    public func recordToolResults(messageID: String, results: [String: ToolCallResult]) throws(StoreError) -> Message {
        try write { (writer, now) throws(StoreError) in
            let database = writer.database
            let found = try database.queryFirst(
                "SELECT \(Message.columns) FROM messages WHERE id = ?", [.text(messageID)], Message.init(row:))
            guard var message = found else { throw StoreError.notFound(.message(id: messageID)) }
            guard message.status != .streaming else { throw StoreError.conflict("message \(messageID) is streaming") }
            let leaf = try database.queryFirst("SELECT current_leaf_id FROM conversations WHERE id = ?",
                                               [.text(message.conversationID)]) { $0.optionalText(0) }
            guard leaf == messageID else {
                throw StoreError.conflict("message \(messageID) is not its conversation's current leaf")
            }
            for (callID, result) in results {
                guard let index = message.parts.firstIndex(where: { $0.toolCall?.id == callID }),
                      var call = message.parts[index].toolCall else {
                    throw StoreError.notFound(.toolCall(id: callID, messageID: messageID))
                }
                call.result = result
                call.status = .complete
                message.parts[index] = .toolCall(call)
            }
            try database.run("UPDATE messages SET parts = ?, updated_at = ? WHERE id = ?",
                             [.text(MessagePart.storedText(message.parts)), .integer(now), .text(messageID)])
            message.updatedAt = Date(millisecondsSince1970: now)
            return message
        }
    }
}
