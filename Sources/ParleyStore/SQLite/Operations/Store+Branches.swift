extension Store {
    // MARK: - Reading messages and branches

    /// The message, or nil; with `owner`, nil also when its conversation belongs to another user.
    /// Without it, for code that has already checked the owner. Read transaction.
    public func message(id: String, ownedBy owner: String? = nil) throws(StoreError) -> Message? {
        try read { (database) throws(StoreError) in
            guard let owner else {
                return try database.queryFirst(
                    "SELECT \(Message.columns) FROM messages WHERE id = ?", [.text(id)], Message.init(row:))
            }
            // A correlated EXISTS is one primary-key probe; `conversation_id IN (SELECT id FROM
            // conversations WHERE owner_id = ?)` built a temporary list of all the owner's
            // conversations on every call (a third of a start's CPU with 1,500 conversations).
            return try database.queryFirst(
                """
                SELECT \(Message.columns) FROM messages
                WHERE id = ? AND EXISTS (SELECT 1 FROM conversations
                                         WHERE conversations.id = messages.conversation_id AND owner_id = ?)
                """,
                [.text(id), .text(owner)], Message.init(row:))
        }
    }

    /// Every message of a conversation (all branches) in creation order, e.g. for export or a tree
    /// view. Read transaction. Throws `notFound` for an unknown conversation.
    public func messages(conversationID: String) throws(StoreError) -> [Message] {
        try read { (database) throws(StoreError) in
            try requireConversation(conversationID, database: database)
            return try database.query(
                "SELECT \(Message.columns) FROM messages WHERE conversation_id = ? ORDER BY created_at, id",
                [.text(conversationID)], Message.init(row:))
        }
    }

    /// The root-to-leaf path ending at the conversation's current leaf, each message with its
    /// siblings; empty for an empty conversation. Two indexed queries whatever the length (a
    /// recursive walk up `parent_id`, then all siblings along it), one read transaction.
    /// Throws `notFound` for an unknown conversation.
    public func currentBranch(conversationID: String) throws(StoreError) -> [BranchMessage] {
        try read { (database) throws(StoreError) in
            let leaf = try database.queryFirst(
                "SELECT current_leaf_id FROM conversations WHERE id = ?", [.text(conversationID)]
            ) { row in row.optionalText(0) }
            // Outer optional: is there a conversation; inner: does it have messages yet.
            guard let leaf else { throw StoreError.notFound(.conversation(id: conversationID)) }
            guard let leaf else { return [] }
            let path = try Self.path(to: leaf, database: database)
            let siblings = try database.query(
                """
                WITH RECURSIVE \(Self.pathCTE)
                SELECT id, parent_id FROM (
                    SELECT s.id, s.parent_id, s.created_at FROM messages s
                    WHERE s.parent_id IN (SELECT parent_id FROM path)
                    UNION ALL
                    SELECT s.id, s.parent_id, s.created_at FROM messages s
                    WHERE s.conversation_id = ?2 AND s.parent_id IS NULL
                ) AS siblings
                ORDER BY created_at, id
                """,
                [.text(leaf), .text(conversationID)]) { row in (id: row.text(0), parentID: row.optionalText(1)) }
            var idsByParent: [String?: [String]] = [:]
            for sibling in siblings {
                idsByParent[sibling.parentID, default: []].append(sibling.id)
            }
            return path.map { message in
                let ids = idsByParent[message.parentID] ?? [message.id]
                let index = ids.firstIndex(of: message.id) ?? 0
                return BranchMessage(message: message, siblings: SiblingInfo(index: index, count: ids.count, ids: ids))
            }
        }
    }

    /// The root-to-leaf messages ending at `leafID` (what the upstream prompt is built from).
    /// Read transaction. Throws `notFound` for an unknown id.
    public func contextPath(leafID: String) throws(StoreError) -> [Message] {
        let path = try read { (database) throws(StoreError) in try Self.path(to: leafID, database: database) }
        guard !path.isEmpty else { throw StoreError.notFound(.message(id: leafID)) }
        return path
    }

    // MARK: - Read helpers

    /// `path(id, parent_id, depth)`: the message bound to ?1 and its ancestors, depth 0 at ?1.
    /// Parents always exist before their children and ids never change, so the walk ends at a root.
    static let pathCTE = """
        path(id, parent_id, depth) AS (
            SELECT id, parent_id, 0 FROM messages WHERE id = ?1
            UNION ALL
            SELECT m.id, m.parent_id, path.depth + 1 FROM messages m JOIN path ON m.id = path.parent_id
        )
        """

    /// The messages of `pathCTE`, root first.
    static let pathQuery = """
        WITH RECURSIVE \(pathCTE)
        SELECT \(Message.columns(alias: "m")) FROM path JOIN messages m ON m.id = path.id
        ORDER BY path.depth DESC
        """

    static func path(to leafID: String, database: Database) throws(StoreError) -> [Message] {
        try database.query(pathQuery, [.text(leafID)], Message.init(row:))
    }

    private func requireConversation(_ id: String, database: Database) throws(StoreError) {
        let exists = try database.queryFirst(
            "SELECT 1 FROM conversations WHERE id = ?", [.text(id)]) { _ in true } ?? false
        guard exists else { throw StoreError.notFound(.conversation(id: id)) }
    }
}
