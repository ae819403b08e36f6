import Foundation

extension Store {
    // MARK: - Writing generation settings

    /// Changes the conversation's generation settings as `change` says (see `GenerationSettingsChange`)
    /// and bumps `updatedAt`. Returns nil if the caller has no such conversation. Write transaction.
    public func updateGenerationSettings(
        id: String, ownedBy owner: String = User.localID, _ change: GenerationSettingsChange
    ) throws(StoreError) -> Conversation? {
        try write { (writer, now) throws(StoreError) in
            try writer.database.queryFirst(
                """
                UPDATE conversations SET
                    temperature = CASE WHEN ?3 THEN ?4 ELSE temperature END,
                    top_p = CASE WHEN ?5 THEN ?6 ELSE top_p END,
                    max_tokens = CASE WHEN ?7 THEN ?8 ELSE max_tokens END,
                    updated_at = ?9
                WHERE id = ?1 AND owner_id = ?2
                RETURNING \(Conversation.columns)
                """,
                [.text(id), .text(owner),
                 .bool(change.temperature != nil), .optionalReal(change.temperature ?? nil),
                 .bool(change.topP != nil), .optionalReal(change.topP ?? nil),
                 .bool(change.maxTokens != nil), .optionalInteger(change.maxTokens ?? nil),
                 .integer(writer.nextConversationMilliseconds(now: now))],
                Conversation.init(row:))
        }
    }
}
