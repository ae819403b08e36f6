import Foundation
import ParleyPrimitives

extension Store {
    // MARK: - Writing conversations

    /// Creates an empty conversation (title defaults to `Store.defaultTitle`). Write transaction.
    public func createConversation(
        title: String? = nil, model: String? = nil, systemPrompt: String? = nil, ownedBy owner: String = User.localID,
        settings: GenerationSettings = GenerationSettings(), tools: [String] = []
    ) throws(StoreError) -> Conversation {
        try write { (writer, now) throws(StoreError) in
            try createConversation(writer, now: now, title: title, model: model, systemPrompt: systemPrompt,
                                   ownedBy: owner, settings: settings, tools: tools)
        }
    }

    /// `createConversation`'s work inside an open write transaction (its own, or a shared one).
    func createConversation(
        _ writer: Writer, now: Int64, title: String?, model: String?, systemPrompt: String?, ownedBy owner: String,
        settings: GenerationSettings, tools: [String]
    ) throws(StoreError) -> Conversation {
        let stamp = writer.nextConversationMilliseconds(now: now)
        let created = try writer.database.queryFirst(
            """
            INSERT INTO conversations (id, title, model, system_prompt, current_leaf_id, created_at, updated_at,
                                       owner_id, temperature, top_p, max_tokens, tools)
            VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?)
            RETURNING \(Conversation.columns)
            """,
            [.text(RecordID.make()), .text(title ?? Store.defaultTitle), .optionalText(model),
             .optionalText(systemPrompt), .integer(stamp), .integer(stamp), .text(owner),
             .optionalReal(settings.temperature), .optionalReal(settings.topP), .optionalInteger(settings.maxTokens),
             .text(JSON.array(tools.map(JSON.string)).text)],
            Conversation.init(row:))
        guard let created else { throw StoreError.corrupt("INSERT returned no conversation") }
        return created
    }

    /// Changes the given settings: nil leaves a field as it is; for the optional ones `.some(nil)`
    /// clears it. Bumps `updatedAt` when the title, system prompt or model change (pinning and
    /// archiving are not activity: they do not move a conversation in the list). Returns nil if there
    /// is no such conversation. Write transaction.
    public func updateConversation(
        id: String, ownedBy owner: String = User.localID, title: String? = nil, systemPrompt: String?? = nil,
        model: String?? = nil, pinned: Bool? = nil, archived: Bool? = nil
    ) throws(StoreError) -> Conversation? {
        let isActivity = title != nil || systemPrompt != nil || model != nil
        return try write { (writer, now) throws(StoreError) in
            try writer.database.queryFirst(
                """
                UPDATE conversations SET
                    title = coalesce(?2, title),
                    system_prompt = CASE WHEN ?3 THEN ?4 ELSE system_prompt END,
                    model = CASE WHEN ?5 THEN ?6 ELSE model END,
                    updated_at = CASE WHEN ?9 THEN ?7 ELSE updated_at END,
                    pinned = coalesce(?10, pinned),
                    archived = coalesce(?11, archived)
                WHERE id = ?1 AND owner_id = ?8
                RETURNING \(Conversation.columns)
                """,
                [.text(id), .optionalText(title),
                 .bool(systemPrompt != nil), .optionalText(systemPrompt ?? nil),
                 .bool(model != nil), .optionalText(model ?? nil),
                 .integer(isActivity ? writer.nextConversationMilliseconds(now: now) : 0), .text(owner),
                 .bool(isActivity), pinned.map(SQLValue.bool) ?? .null, archived.map(SQLValue.bool) ?? .null],
                Conversation.init(row:))
        }
    }

    /// Deletes a conversation and all its messages, and with them the deleted files only they held
    /// (their bytes are removed right after, see `releaseFileBlobs`). Returns false if there was no
    /// such conversation. Write transaction.
    @discardableResult
    public func deleteConversation(id: String, ownedBy owner: String = User.localID) throws(StoreError) -> Bool {
        let deleted = try write { (writer, _) throws(StoreError) in
            try writer.database.run("DELETE FROM conversations WHERE id = ? AND owner_id = ?",
                                    [.text(id), .text(owner)]) > 0
        }
        if deleted { releaseFileBlobsAfterCommit() }
        return deleted
    }

    // MARK: - Reading conversations

    /// The conversation, or nil; with `owner`, nil also when another user owns it (callers answer
    /// both alike). Without it, for code that has already checked the owner. Read transaction.
    public func conversation(id: String, ownedBy owner: String? = nil) throws(StoreError) -> Conversation? {
        try read { (database) throws(StoreError) in
            try database.queryFirst(
                "SELECT \(Conversation.columns) FROM conversations WHERE id = ? AND (owner_id = ?2 OR ?2 IS NULL)",
                [.text(id), .optionalText(owner)], Conversation.init(row:))
        }
    }

    /// A page of conversations, most recently updated first (ties broken by id, so the order is
    /// total and pages never overlap or skip). `limit` is cut to 1...`configuration.maxPageSize`.
    /// `cursor` is a previous page's `nextCursor`; anything else throws `StoreError.invalidCursor`.
    /// `pinned` and `archived` keep only conversations with that flag (nil: either); archived
    /// conversations are left out unless asked for.
    /// Read transaction; keyset pagination, so a page costs the same however deep it is.
    public func listConversations(
        ownedBy owner: String = User.localID, limit: Int = Store.defaultPageSize, cursor: String? = nil,
        pinned: Bool? = nil, archived: Bool? = false
    ) throws(StoreError) -> ConversationPage {
        let pageSize = min(max(limit, 1), configuration.maxPageSize)
        let after = try cursor.map { (text) throws(StoreError) in try PageCursor(encoded: text) }
        let flags: [SQLValue] = [pinned.map(SQLValue.bool) ?? .null, archived.map(SQLValue.bool) ?? .null]
        let rows = try read { (database) throws(StoreError) in
            if let after {
                return try database.query(
                    """
                    SELECT \(Conversation.columns) FROM conversations
                    WHERE owner_id = ?1 AND (pinned = ?2 OR ?2 IS NULL) AND (archived = ?3 OR ?3 IS NULL)
                      AND (updated_at, id) < (?4, ?5)
                    ORDER BY updated_at DESC, id DESC LIMIT ?6
                    """,
                    [.text(owner)] + flags + [.integer(after.updatedAtMilliseconds), .text(after.id),
                                              .integer(Int64(pageSize + 1))],
                    Conversation.init(row:))
            }
            return try database.query(
                """
                SELECT \(Conversation.columns) FROM conversations
                WHERE owner_id = ?1 AND (pinned = ?2 OR ?2 IS NULL) AND (archived = ?3 OR ?3 IS NULL)
                ORDER BY updated_at DESC, id DESC LIMIT ?4
                """,
                [.text(owner)] + flags + [.integer(Int64(pageSize + 1))], Conversation.init(row:))
        }
        guard rows.count > pageSize else { return ConversationPage(items: rows, nextCursor: nil) }
        let items = Array(rows.prefix(pageSize))
        let last = items[items.count - 1]
        let next = PageCursor(updatedAtMilliseconds: last.updatedAt.millisecondsSince1970, id: last.id)
        return ConversationPage(items: items, nextCursor: next.encoded)
    }
}
