extension Store {
    // MARK: - Reading preferences

    /// The user's preferences; `UserPreferences.defaults` for one who never changed any (no row).
    /// Read transaction.
    public func preferences(of userID: String) throws(StoreError) -> UserPreferences {
        try read { (database) throws(StoreError) in
            try database.queryFirst(
                "SELECT \(UserPreferences.columns) FROM user_preferences WHERE user_id = ?",
                [.text(userID)], UserPreferences.init(row:)) ?? .defaults
        }
    }

    // MARK: - Writing preferences

    /// Applies `change` to the user's preferences (creating their row on the first change) and returns
    /// the whole result. Read and write happen in one write transaction, so two changes of different
    /// fields made at once both stay.
    @discardableResult
    public func updatePreferences(of userID: String, _ change: UserPreferences.Change) throws(StoreError)
        -> UserPreferences
    {
        try write { (writer, now) throws(StoreError) in
            let database = writer.database
            let current = try database.queryFirst(
                "SELECT \(UserPreferences.columns) FROM user_preferences WHERE user_id = ?",
                [.text(userID)], UserPreferences.init(row:)) ?? .defaults
            let next = change.applied(to: current)
            try database.run(
                """
                INSERT INTO user_preferences (user_id, theme, default_model, default_system_prompt, send_key, updated_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                ON CONFLICT (user_id) DO UPDATE SET theme = ?2, default_model = ?3, default_system_prompt = ?4,
                    send_key = ?5, updated_at = ?6
                """,
                [.text(userID), .text(next.theme.rawValue), .optionalText(next.defaultModel),
                 .optionalText(next.defaultSystemPrompt), .text(next.sendKey.rawValue), .integer(now)])
            return next
        }
    }
}
