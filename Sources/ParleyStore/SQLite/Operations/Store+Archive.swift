import Foundation
import ParleyPrimitives
import ParleyOutcome

extension Store {
    // MARK: - Export

    /// The conversation and every message of its tree in creation order, read in one transaction;
    /// nil when there is no such conversation of `owner`. Read transaction.
    public func archive(conversationID: String, ownedBy owner: String) throws(StoreError) -> ConversationArchive? {
        try read { (database) throws(StoreError) in
            let conversation = try database.queryFirst(
                "SELECT \(Conversation.columns) FROM conversations WHERE id = ? AND owner_id = ?",
                [.text(conversationID), .text(owner)], Conversation.init(row:))
            guard let conversation else { return nil }
            let messages = try database.query(
                "SELECT \(Message.columns) FROM messages WHERE conversation_id = ? ORDER BY created_at, id",
                [.text(conversationID)], Message.init(row:))
            return ConversationArchive(conversation: conversation, messages: messages)
        }
    }

    /// A page of the owner's conversations in creation order, as keys (`ExportKey`: creation time and
    /// id), after `after` (a previous page's last key; nil for the first page). A key, not an id,
    /// marks the place: the conversation it names may be deleted before the next page is read.
    /// For exports that read one conversation at a time. Read transaction.
    public func conversationKeys(ownedBy owner: String, after: ExportKey?, limit: Int) throws(StoreError) -> [ExportKey] {
        try read { (database) throws(StoreError) in
            try database.query(
                """
                SELECT created_at, id FROM conversations
                WHERE owner_id = ?1 AND ((created_at, id) > (?2, ?3) OR ?2 IS NULL)
                ORDER BY created_at, id LIMIT ?4
                """,
                [.text(owner), after.map { .integer($0.createdAtMilliseconds) } ?? .null, .optionalText(after?.id),
                 .integer(Int64(max(limit, 1)))]
            ) { row in ExportKey(createdAtMilliseconds: row.int64(0), id: row.text(1)) }
        }
    }

    // MARK: - Import and fork

    /// Writes the archives as new conversations of `owner`, all or none (one write transaction).
    /// Every conversation and message gets a new id; parent links, the current leaf, contents,
    /// statuses, models, usage and timestamps are kept. A nil current leaf becomes the newest
    /// message without replies. Each tree is checked first (`MessageTree`): `invalidImport` names
    /// the first fault (with `conversations[i]: ` when there are several) and nothing
    /// is written. Each archive's `files` are attached to the new messages (the owner's files, deleted
    /// ones too) in the same transaction; an unknown message or file id refuses the whole import.
    /// Returns the new conversations in the given order.
    public func importConversations(
        _ archives: [ConversationArchive], ownedBy owner: String
    ) throws(StoreError) -> [Conversation] {
        var trees: [MessageTree] = []
        for (index, archive) in archives.enumerated() {
            do {
                trees.append(try MessageTree(archive.messages, currentLeafID: archive.conversation.currentLeafID))
            } catch {
                // Several conversations: say which one, as the document's path does.
                guard archives.count > 1, case .invalidImport(let why) = error else { throw error }
                throw StoreError.invalidImport("conversations[\(index)]: \(why)")
            }
        }
        return try write { (writer, _) throws(StoreError) in
            var imported: [Conversation] = []
            for (archive, tree) in zip(archives, trees) {
                let source = archive.conversation
                let conversationID = RecordID.make()
                try insertConversation(writer.database, source, id: conversationID, owner: owner,
                                       createdAt: source.createdAt.millisecondsSince1970,
                                       updatedAt: source.updatedAt.millisecondsSince1970, imported: true)
                var newIDs: [String: String] = [:]
                for message in tree.ordered {
                    let id = RecordID.make()
                    newIDs[message.id] = id
                    try insertCopy(writer.database, message, id: id, conversationID: conversationID,
                                   parentID: message.parentID.flatMap { newIDs[$0] })
                }
                for (oldID, fileIDs) in archive.files.sorted(by: { $0.key < $1.key }) {
                    guard let messageID = newIDs[oldID] else {
                        throw StoreError.invalidImport("files name message \(oldID), which is not in the conversation")
                    }
                    try Self.insertMessageFiles(writer.database, fileIDs, messageID: messageID, owner: owner,
                                                includingDeleted: true)
                }
                try countUsage(writer.database, of: conversationID)
                let leaf = source.currentLeafID ?? Self.newestLeaf(tree.ordered)
                let conversation = try writer.database.queryFirst(
                    "UPDATE conversations SET current_leaf_id = ? WHERE id = ? RETURNING \(Conversation.columns)",
                    [.optionalText(leaf.flatMap { newIDs[$0] }), .text(conversationID)], Conversation.init(row:))
                guard let conversation else { throw StoreError.corrupt("UPDATE returned no conversation") }
                imported.append(conversation)
            }
            return imported
        }
    }

    /// A new conversation of `owner` holding copies of the branch from the root to `messageID` (which
    /// becomes its current leaf), with the source's title, model, system prompt and generation settings; the copies keep
    /// content, reasoning, status, usage, timestamps and files. Throws `notFound` when the conversation is not
    /// the owner's or the message is not in it, `conflict` when a message on the branch is still
    /// streaming. Write transaction.
    public func forkConversation(
        id: String, ownedBy owner: String, at messageID: String, title: String? = nil
    ) throws(StoreError) -> Conversation {
        try write { (writer, now) throws(StoreError) in
            let database = writer.database
            let source = try database.queryFirst(
                "SELECT \(Conversation.columns) FROM conversations WHERE id = ? AND owner_id = ?",
                [.text(id), .text(owner)], Conversation.init(row:))
            guard let source else { throw StoreError.notFound(.conversation(id: id)) }
            let path = try Self.path(to: messageID, database: database)
            guard let last = path.last, last.conversationID == id else {
                throw StoreError.notFound(.messageInConversation(id: messageID, conversationID: id, assistant: false))
            }
            if let streaming = path.first(where: { $0.status == .streaming }) {
                throw StoreError.conflict("message \(streaming.id) is still streaming; fork once it has finished")
            }
            var copy = source
            copy.title = title ?? source.title
            copy.pinned = false
            copy.archived = false
            let stamp = writer.nextConversationMilliseconds(now: now)
            let conversationID = RecordID.make()
            try insertConversation(database, copy, id: conversationID, owner: owner, createdAt: stamp, updatedAt: stamp,
                                   imported: false)
            var parentID: String?
            for message in path {
                let newID = RecordID.make()
                try insertCopy(database, message, id: newID, conversationID: conversationID, parentID: parentID)
                // The copy shows the same files (kept alive by it, like the original's).
                try database.run(
                    "INSERT INTO message_files (message_id, file_id, position) SELECT ?, file_id, position FROM message_files WHERE message_id = ?",
                    [.text(newID), .text(message.id)])
                parentID = newID
            }
            try countUsage(database, of: conversationID)
            let forked = try database.queryFirst(
                "UPDATE conversations SET current_leaf_id = ? WHERE id = ? RETURNING \(Conversation.columns)",
                [.optionalText(parentID), .text(conversationID)], Conversation.init(row:))
            guard let forked else { throw StoreError.corrupt("UPDATE returned no conversation") }
            return forked
        }
    }

    // MARK: - Write helpers (inside a write transaction)

    private func insertConversation(
        _ database: Database, _ source: Conversation, id: String, owner: String, createdAt: Int64, updatedAt: Int64,
        imported: Bool
    ) throws(StoreError) {
        try database.run(
            """
            INSERT INTO conversations (id, title, model, system_prompt, current_leaf_id, created_at, updated_at,
                                       owner_id, temperature, top_p, max_tokens, pinned, archived, imported, tools)
            VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(id), .text(source.title), .optionalText(source.model), .optionalText(source.systemPrompt),
             .integer(createdAt), .integer(updatedAt), .text(owner), .optionalReal(source.settings.temperature),
             .optionalReal(source.settings.topP), .optionalInteger(source.settings.maxTokens),
             .bool(source.pinned), .bool(source.archived), .bool(imported),
             .text(JSON.array(source.tools.map(JSON.string)).text)])
    }

    /// The conversation's token totals (`conversation_usage`) from the usage its copied replies carry,
    /// one run each. Only the conversation's totals: nothing was spent here, so the owner's daily
    /// usage and budget are left alone. `insertCopy` wrote each count through `ReplyTokens`, so each is
    /// at most `ReplyTokens.maximum` and the sums cannot overflow short of 9.2 billion replies.
    private func countUsage(_ database: Database, of conversationID: String) throws(StoreError) {
        try database.run(database.dialect == .sqlite ? Self.sqliteCountUsage : Self.postgresCountUsage,
                         [.text(conversationID)])
    }

    private static let sqliteCountUsage = """
        INSERT INTO conversation_usage (conversation_id, input_tokens, output_tokens, replies, estimated_replies)
        SELECT ?1, coalesce(sum(json_extract(usage, '$.input_tokens')), 0),
               coalesce(sum(json_extract(usage, '$.output_tokens')), 0), count(*),
               coalesce(sum(json_extract(usage, '$.estimated')), 0)
        FROM messages
        WHERE conversation_id = ?1 AND role = 'assistant' AND CASE WHEN json_valid(usage)
              THEN json_type(usage) = 'object' END
        HAVING count(*) > 0
        """

    /// The same on PostgreSQL, from the usage parsed when it was written (`messages.usage_json`).
    private static let postgresCountUsage = """
        INSERT INTO conversation_usage (conversation_id, input_tokens, output_tokens, replies, estimated_replies)
        SELECT ?1::TEXT, coalesce(sum(parley_jsonb_count(usage_json -> 'input_tokens')), 0)::BIGINT,
               coalesce(sum(parley_jsonb_count(usage_json -> 'output_tokens')), 0)::BIGINT, count(*),
               coalesce(sum(parley_jsonb_count(usage_json -> 'estimated')), 0)::BIGINT
        FROM messages
        WHERE conversation_id = ?1 AND role = 'assistant' AND jsonb_typeof(usage_json) = 'object'
        HAVING count(*) > 0
        """

    /// Inserts `message` under a new id, conversation and parent, every other field as it is but its
    /// usage, which is written again through `ReplyTokens` (counts clamped into range: a copy of a row
    /// stored before the bound, or a caller's text, is bounded like a provider's figures). Only an
    /// assistant message keeps its HTML: a user or system message is plain text (issue 18).
    private func insertCopy(
        _ database: Database, _ message: Message, id: String, conversationID: String, parentID: String?
    ) throws(StoreError) {
        try database.run(
            """
            INSERT INTO messages (id, conversation_id, parent_id, role, content, reasoning, status, finish_reason,
                                  model, usage, error_code, error_message, html, created_at, updated_at, parts)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(id), .text(conversationID), .optionalText(parentID), .text(message.role.rawValue),
             .text(message.content), .text(message.reasoning), .text(message.status.rawValue),
             .optionalText(message.finishReason?.rawValue), .optionalText(message.model),
             .optionalText(message.usage?.json),
             .optionalText(message.errorCode?.rawValue), .optionalText(message.errorMessage),
             .optionalText(message.role == .assistant ? message.html : nil),
             .integer(message.createdAt.millisecondsSince1970), .integer(message.updatedAt.millisecondsSince1970),
             // A message with tool calls, surfaces or an action keeps its parts; one of text alone has the
             // parts its text gives.
             .optionalText(message.hasOwnParts ? MessagePart.storedText(message.parts) : nil)])
    }

    /// The newest message without replies (ties: the later in the list), or nil for no messages.
    private static func newestLeaf(_ messages: [Message]) -> String? {
        let parents = Set(messages.compactMap(\.parentID))
        return messages.filter { !parents.contains($0.id) }
            .max { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }?.id
    }
}
