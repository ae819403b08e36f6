import Foundation
import ParleyOutcome

extension Store {
    // MARK: - Writing messages

    /// Adds a user message and its (empty, `streaming`) assistant reply in one write transaction,
    /// and makes the reply the current leaf. `parentID` nil: under the current leaf (a root in an
    /// empty conversation); otherwise under that assistant message of the conversation (editing a user
    /// message = placing the new one under the old one's parent). To edit the very first message,
    /// use `appendTurn(conversationID:placement: .root, ...)`.
    /// `model` nil means the conversation's model. Throws `notFound` for an unknown conversation,
    /// or a parent that is not an assistant message of this conversation.
    public func appendTurn(
        conversationID: String, parentID: String?, userContent: String, model: String?
    ) throws(StoreError) -> (user: Message, assistant: Message) {
        try appendTurn(
            conversationID: conversationID,
            placement: parentID.map { TurnPlacement.under(messageID: $0) } ?? .afterCurrentLeaf,
            userContent: userContent, model: model)
    }

    /// `appendTurn` with every placement, including a new root. Same contract as above, and a parent
    /// must be an assistant message (a user message under a user message would make two user turns
    /// in a row): anything else throws `notFound`. The user message is stored without HTML: it is
    /// shown exactly as typed, never as Markdown.
    public func appendTurn(
        conversationID: String, placement: TurnPlacement, userContent: String, model: String?
    ) throws(StoreError) -> (user: Message, assistant: Message) {
        try write { (writer, now) throws(StoreError) in
            try insertTurn(writer, now: now, conversationID: conversationID, placement: placement,
                           userContent: userContent, model: model)
        }
    }

    /// `appendTurn` for a reply about to be generated: the same write, plus the branch the model
    /// answers (root to the new user message), read in the same transaction.
    /// `fileIDs` are the files the user message carries, in order: each must be a live file of the
    /// conversation's owner (`notFound(.file)` otherwise, and nothing is written).
    public func beginTurn(
        conversationID: String, placement: TurnPlacement, userContent: String, model: String?,
        fileIDs: [String] = [], userParts: [MessagePart]? = nil
    ) throws(StoreError) -> ReplyStart {
        try write { (writer, now) throws(StoreError) in
            try beginTurn(writer, now: now, conversationID: conversationID, placement: placement,
                          userContent: userContent, model: model, fileIDs: fileIDs, userParts: userParts)
        }
    }

    /// `beginTurn`'s work inside an open write transaction (its own, or a shared one: `Store+SharedStarts`).
    func beginTurn(
        _ writer: Writer, now: Int64, conversationID: String, placement: TurnPlacement, userContent: String,
        model: String?, fileIDs: [String], userParts: [MessagePart]?
    ) throws(StoreError) -> ReplyStart {
        let turn = try insertTurn(writer, now: now, conversationID: conversationID, placement: placement,
                                  userContent: userContent, model: model, userParts: userParts)
        if !fileIDs.isEmpty {
            let owner = try writer.database.queryFirst(
                "SELECT owner_id FROM conversations WHERE id = ?", [.text(conversationID)]) { row in row.text(0) }
            try Self.insertMessageFiles(writer.database, fileIDs, messageID: turn.user.id, owner: owner ?? "",
                                        includingDeleted: false)
        }
        return ReplyStart(user: turn.user, reply: turn.assistant,
                          context: try Self.path(to: turn.user.id, database: writer.database))
    }

    private func insertTurn(
        _ writer: Writer, now: Int64, conversationID: String, placement: TurnPlacement, userContent: String,
        model: String?, userParts: [MessagePart]? = nil
    ) throws(StoreError) -> (user: Message, assistant: Message) {
        let database = writer.database
        let found = try database.queryFirst(
            "SELECT current_leaf_id, model FROM conversations WHERE id = ?", [.text(conversationID)]
        ) { row in (leaf: row.optionalText(0), model: row.optionalText(1)) }
        guard let found else { throw StoreError.notFound(.conversation(id: conversationID)) }
        let parentID: String?
        switch placement {
        case .afterCurrentLeaf:
            parentID = found.leaf
        case .root:
            parentID = nil
        case .under(let messageID):
            try requireAssistantMessage(messageID, in: conversationID, database: database)
            parentID = messageID
        }
        let user = try insertMessage(
            database, conversationID: conversationID, parentID: parentID, role: .user,
            content: userContent, status: .complete, model: nil,
            createdAt: writer.nextMessageMilliseconds(now: now), parts: userParts)
        let assistant = try insertMessage(
            database, conversationID: conversationID, parentID: user.id, role: .assistant,
            content: "", status: .streaming, model: model ?? found.model,
            createdAt: writer.nextMessageMilliseconds(now: now))
        try moveLeaf(of: conversationID, to: assistant.id, at: writer.nextConversationMilliseconds(now: now),
                     database: database)
        return (user, assistant)
    }

    /// Regenerate: a new `streaming` assistant message beside `id` (same parent), which becomes
    /// the current leaf. `model` nil keeps the original's model. Throws `notFound` for an unknown
    /// id, `conflict` if it is not an assistant message. Write transaction.
    public func createSibling(ofAssistant id: String, model: String?) throws(StoreError) -> Message {
        try beginSibling(ofAssistant: id, model: model).reply
    }

    /// `createSibling` for a reply about to be generated, with the branch the model answers (root to
    /// the user message both answer), read in the same transaction.
    public func beginSibling(ofAssistant id: String, model: String?) throws(StoreError) -> ReplyStart {
        try write { (writer, now) throws(StoreError) in
            try beginSibling(writer, now: now, ofAssistant: id, model: model)
        }
    }

    /// `beginSibling`'s work inside an open write transaction (its own, or a shared one).
    func beginSibling(_ writer: Writer, now: Int64, ofAssistant id: String, model: String?) throws(StoreError) -> ReplyStart {
        let database = writer.database
        let original = try requireMessage(id, database: database)
        guard original.role == .assistant else {
            throw StoreError.conflict("message \(id) is a \(original.role.rawValue) message, not an assistant one")
        }
        let sibling = try insertMessage(
            database, conversationID: original.conversationID, parentID: original.parentID,
            role: .assistant, content: "", status: .streaming, model: model ?? original.model,
            createdAt: writer.nextMessageMilliseconds(now: now))
        try moveLeaf(of: original.conversationID, to: sibling.id, at: writer.nextConversationMilliseconds(now: now), database: database)
        let context = try original.parentID.map { (parent) throws(StoreError) in
            try Self.path(to: parent, database: database)
        } ?? []
        return ReplyStart(user: nil, reply: sibling, context: context)
    }

    /// Group commit of streaming progress: one write transaction for all updates. Only rows still
    /// `streaming` change (a message finished or stopped meanwhile keeps its final content).
    /// Returns how many rows changed. Does not bump the conversation's `updatedAt`.
    @discardableResult
    public func saveProgress(_ updates: [MessageProgress]) throws(StoreError) -> Int {
        guard !updates.isEmpty else { return 0 }
        return try write { (writer, now) throws(StoreError) in
            var changed = 0
            for update in updates {
                changed += try writer.database.run(
                    """
                    UPDATE messages SET content = ?, reasoning = ?, updated_at = ?, parts = coalesce(?, parts)
                    WHERE id = ? AND status = 'streaming'
                    """,
                    [.text(update.content), .text(update.reasoning), .integer(now),
                     .optionalText(update.parts.map(MessagePart.storedText)), .text(update.id)])
            }
            return changed
        }
    }

    /// Ends a `streaming` message with its final content and a final `status` (not `.streaming`,
    /// else `conflict`). `model` and `reasoning` nil keep the stored value; the other optional
    /// fields are stored as given (`usage` already bounded by `ReplyTokens`; a missing count is
    /// estimated by the `usage_on_finish` trigger). Bumps the conversation's `updatedAt`. Throws
    /// `notFound` for an unknown id, `conflict` if the message is not streaming (finishing twice is a
    /// bug). Write transaction.
    public func finishMessage(
        id: String, content: String, reasoning: String? = nil, status: MessageStatus, finishReason: FinishReason? = nil,
        usage: ReplyTokens? = nil, model: String? = nil, errorCode: ReplyErrorCode? = nil,
        errorMessage: String? = nil, html: String? = nil, parts: [MessagePart]? = nil
    ) throws(StoreError) -> Message {
        guard status != .streaming else {
            throw StoreError.conflict("finishMessage needs a final status, not streaming")
        }
        return try write { (writer, now) throws(StoreError) in
            let database = writer.database
            let finished = try database.queryFirst(
                """
                UPDATE messages SET content = ?, status = ?, finish_reason = ?, model = coalesce(?, model),
                    usage = ?, error_code = ?, error_message = ?, html = ?, updated_at = ?,
                    reasoning = coalesce(?, reasoning), parts = coalesce(?, parts)
                WHERE id = ? AND status = 'streaming'
                RETURNING \(Message.columns)
                """,
                [.text(content), .text(status.rawValue), .optionalText(finishReason?.rawValue), .optionalText(model),
                 .optionalText(usage?.json), .optionalText(errorCode?.rawValue), .optionalText(errorMessage),
                 .optionalText(html), .integer(now), .optionalText(reasoning),
                 .optionalText(parts.map(MessagePart.storedText)), .text(id)],
                Message.init(row:))
            guard let finished else {
                let existing = try requireMessage(id, database: database)
                throw StoreError.conflict("message \(id) is \(existing.status.rawValue), not streaming")
            }
            try database.run(
                "UPDATE conversations SET updated_at = ? WHERE id = ?",
                [.integer(writer.nextConversationMilliseconds(now: now)), .text(finished.conversationID)])
            // Read again: the `usage_on_finish` trigger may have completed the usage (RETURNING does not see it).
            return try requireMessage(id, database: database)
        }
    }

    /// Continue: puts a finished assistant leaf (`stopped`, `interrupted`, `failed` or `complete`)
    /// back to `streaming`, keeping its content and clearing finish reason, error and HTML; it
    /// becomes the current leaf. Throws `notFound` for an unknown id; `conflict` if it is already
    /// streaming, not an assistant message, or has replies (continuing it would change their
    /// context). Write transaction.
    public func resumeStreaming(id: String) throws(StoreError) -> Message {
        try beginContinue(id: id).reply
    }

    /// `resumeStreaming` for a reply about to be generated, with the branch the model answers (root
    /// to the user message the reply answers), read in the same transaction.
    public func beginContinue(id: String) throws(StoreError) -> ReplyStart {
        try write { (writer, now) throws(StoreError) in
            let database = writer.database
            let message = try requireMessage(id, database: database)
            guard message.status != .streaming else {
                throw StoreError.conflict("message \(id) is already streaming")
            }
            guard message.role == .assistant else {
                throw StoreError.conflict("message \(id) is a \(message.role.rawValue) message, not an assistant one")
            }
            let hasReplies = try database.queryFirst(
                "SELECT 1 FROM messages WHERE parent_id = ? LIMIT 1", [.text(id)]) { _ in true } ?? false
            guard !hasReplies else { throw StoreError.conflict("message \(id) already has replies") }
            let resumed = try database.queryFirst(
                """
                UPDATE messages SET status = 'streaming', finish_reason = NULL, error_code = NULL,
                    error_message = NULL, html = NULL, updated_at = ?
                WHERE id = ? AND status <> 'streaming'
                RETURNING \(Message.columns)
                """,
                [.integer(now), .text(id)], Message.init(row:))
            // None: another node's continue turned it `streaming` since the read (PostgreSQL: writers run at once).
            guard let resumed else { throw StoreError.conflict("message \(id) is already streaming") }
            try moveLeaf(of: message.conversationID, to: id, at: writer.nextConversationMilliseconds(now: now), database: database)
            let context = try message.parentID.map { (parent) throws(StoreError) in
                try Self.path(to: parent, database: database)
            } ?? []
            return ReplyStart(user: nil, reply: resumed, context: context)
        }
    }

    /// Switches branch: the current leaf becomes the deepest descendant of `messageID` found by
    /// following the newest child at each level (the message itself if it has none). Returns the
    /// new leaf id. Does not bump `updatedAt` (viewing is not activity). Throws `notFound` if the
    /// message is not in this conversation. Write transaction.
    @discardableResult
    public func setCurrent(conversationID: String, messageID: String) throws(StoreError) -> String {
        try write { (writer, _) throws(StoreError) in
            let database = writer.database
            try requireMessage(messageID, in: conversationID, database: database)
            let leaf = try database.queryFirst(
                """
                WITH RECURSIVE descent(id, depth) AS (
                    SELECT ?, 0
                    UNION ALL
                    SELECT (SELECT child.id FROM messages child WHERE child.parent_id = descent.id
                            ORDER BY child.created_at DESC, child.id DESC LIMIT 1),
                           descent.depth + 1
                    FROM descent WHERE descent.id IS NOT NULL
                )
                SELECT id FROM descent WHERE id IS NOT NULL ORDER BY depth DESC LIMIT 1
                """,
                [.text(messageID)]) { row in row.text(0) } ?? messageID
            try database.run(
                "UPDATE conversations SET current_leaf_id = ? WHERE id = ?",
                [.text(leaf), .text(conversationID)])
            return leaf
        }
    }

    // MARK: - Write helpers (inside a write transaction)

    func insertMessage(
        _ database: Database, conversationID: String, parentID: String?, role: Role, content: String,
        html: String? = nil, status: MessageStatus, model: String?, createdAt: Int64, parts: [MessagePart]? = nil
    ) throws(StoreError) -> Message {
        let inserted = try database.queryFirst(
            """
            INSERT INTO messages (id, conversation_id, parent_id, role, content, html, status, model, created_at, updated_at,
                parts)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            RETURNING \(Message.columns)
            """,
            [.text(RecordID.make()), .text(conversationID), .optionalText(parentID), .text(role.rawValue),
             .text(content), .optionalText(html), .text(status.rawValue), .optionalText(model), .integer(createdAt),
             .integer(createdAt), .optionalText(parts.map(MessagePart.storedText))],
            Message.init(row:))
        guard let inserted else { throw StoreError.corrupt("INSERT returned no message") }
        return inserted
    }

    func moveLeaf(
        of conversationID: String, to leafID: String, at stamp: Int64, database: Database
    ) throws(StoreError) {
        try database.run(
            "UPDATE conversations SET current_leaf_id = ?, updated_at = ? WHERE id = ?",
            [.text(leafID), .integer(stamp), .text(conversationID)])
    }

    @discardableResult
    private func requireMessage(_ id: String, database: Database) throws(StoreError) -> Message {
        let message = try database.queryFirst(
            "SELECT \(Message.columns) FROM messages WHERE id = ?", [.text(id)], Message.init(row:))
        guard let message else { throw StoreError.notFound(.message(id: id)) }
        return message
    }

    private func requireAssistantMessage(
        _ id: String, in conversationID: String, database: Database
    ) throws(StoreError) {
        let exists = try database.queryFirst(
            "SELECT 1 FROM messages WHERE id = ? AND conversation_id = ? AND role = 'assistant'",
            [.text(id), .text(conversationID)]) { _ in true } ?? false
        guard exists else { throw StoreError.notFound(.messageInConversation(id: id, conversationID: conversationID, assistant: true)) }
    }

    private func requireMessage(_ id: String, in conversationID: String, database: Database) throws(StoreError) {
        let exists = try database.queryFirst(
            "SELECT 1 FROM messages WHERE id = ? AND conversation_id = ?",
            [.text(id), .text(conversationID)]) { _ in true } ?? false
        guard exists else { throw StoreError.notFound(.messageInConversation(id: id, conversationID: conversationID, assistant: false)) }
    }

    /// The replies `streaming` now (on any node of a cluster), with their conversation and its owner:
    /// what a conversation's delete or an account's disabling must stop wherever they run. Served by
    /// the partial index of streaming rows, so its cost is the number of live replies. Read transaction.
    public func streamingReplies() throws(StoreError) -> [StreamingReply] {
        try read { (database) throws(StoreError) in
            try database.query(
                "SELECT m.id, m.conversation_id, c.owner_id, m.updated_at FROM messages m "
                    + "\(database.dialect.indexedBy("messages_streaming")) "
                    + "JOIN conversations c ON c.id = m.conversation_id WHERE m.status = 'streaming'"
            ) { row in
                StreamingReply(messageID: row.text(0), conversationID: row.text(1), ownerID: row.text(2),
                               updatedAt: Date(millisecondsSince1970: row.int64(3)))
            }
        }
    }
}
