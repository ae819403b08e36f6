import ParleyPrimitives

extension Store {
    // MARK: - The files messages show

    /// Write transaction: every id is checked (the owner's, live unless `includingDeleted`) before
    /// anything is written; the message must be the owner's too. Positions follow `fileIDs`, after any
    /// the message already shows.
    public func attachFiles(
        _ fileIDs: [String], toMessage messageID: String, ownedBy owner: String, includingDeleted: Bool
    ) throws(StoreError) {
        guard !fileIDs.isEmpty else { return }
        try write { (writer, _) throws(StoreError) in
            let database = writer.database
            let ownsMessage = try database.queryFirst(
                """
                SELECT 1 FROM messages m JOIN conversations c ON c.id = m.conversation_id
                WHERE m.id = ? AND c.owner_id = ?
                """,
                [.text(messageID), .text(owner)]) { _ in true } ?? false
            guard ownsMessage else { throw StoreError.notFound(.message(id: messageID)) }
            try Self.insertMessageFiles(database, fileIDs, messageID: messageID, owner: owner,
                                        includingDeleted: includingDeleted)
        }
    }

    /// Inside a write transaction: checks every id (the owner's, live unless `includingDeleted`; an
    /// unknown or foreign id throws `notFound(.file)` before anything is written), then adds the files
    /// to the message after any it shows. A new user message gets its files in its own transaction
    /// (`beginTurn`), so a reply never starts before they are recorded.
    static func insertMessageFiles(
        _ database: Database, _ fileIDs: [String], messageID: String, owner: String, includingDeleted: Bool
    ) throws(StoreError) {
        guard !fileIDs.isEmpty else { return }
        for id in fileIDs {
            let usable = try database.queryFirst(
                "SELECT 1 FROM files WHERE id = ? AND owner_id = ? AND (? OR deleted_at IS NULL)",
                [.text(id), .text(owner), .bool(includingDeleted)]) { _ in true } ?? false
            guard usable else { throw StoreError.notFound(.file(id: id)) }
        }
        let start = try database.queryFirst(
            "SELECT coalesce(max(position) + 1, 0) FROM message_files WHERE message_id = ?",
            [.text(messageID)]) { row in row.int64(0) } ?? 0
        for (offset, id) in fileIDs.enumerated() {
            try database.run("INSERT INTO message_files (message_id, file_id, position) VALUES (?, ?, ?)",
                             [.text(messageID), .text(id), .integer(start + Int64(offset))])
        }
    }

    /// One read transaction; each file counted once however many messages show it.
    public func attachedFileBytes(ownedBy owner: String) throws(StoreError) -> Int64 {
        try read { (database) throws(StoreError) in
            try database.queryFirst(
                """
                SELECT coalesce(sum(f.bytes), 0) FROM files f WHERE f.id IN (
                    SELECT mf.file_id FROM message_files mf JOIN messages m ON m.id = mf.message_id
                    JOIN conversations c ON c.id = m.conversation_id WHERE c.owner_id = ?)
                """,
                [.text(owner)]) { row in row.int64(0) } ?? 0
        }
    }

    /// One read transaction, one statement whatever the number of messages (the ids go in as one JSON
    /// array, so the statement cache holds one entry).
    public func messageFiles(messageIDs: [String]) throws(StoreError) -> [String: [StoredFile]] {
        guard !messageIDs.isEmpty else { return [:] }
        let rows = try read { (database) throws(StoreError) in
            try database.query(
                """
                SELECT mf.message_id, \(StoredFile.columns("f")) FROM message_files mf JOIN files f ON f.id = mf.file_id
                WHERE mf.message_id IN (\(database.dialect == .sqlite
                    ? "SELECT value FROM json_each(?)" : "SELECT json_array_elements_text(?::JSON)"))
                ORDER BY mf.message_id, mf.position
                """,
                [.text(JSON.array(messageIDs.map(JSON.string)).text)]
            ) { (row) throws(StoreError) in (messageID: row.text(0), file: try StoredFile(row: row, offset: 1)) }
        }
        var files: [String: [StoredFile]] = [:]
        for row in rows {
            files[row.messageID, default: []].append(row.file)
        }
        return files
    }
}
