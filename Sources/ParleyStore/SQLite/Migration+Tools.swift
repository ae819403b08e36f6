extension Migration {
    /// v12: tools (issue 20).
    static let tools: [Migration] = [
        Migration(name: "v12_tool_calls", sql: """
            -- a reply's reasoning, text and tool calls in order (JSON array, see MessagePart+JSON);
            -- NULL: the parts its text gives (every row written before this step)
            ALTER TABLE messages ADD COLUMN parts TEXT;
            -- the tools a conversation's replies may call: a JSON array of tool ids and '<server>/*'
            ALTER TABLE conversations ADD COLUMN tools TEXT NOT NULL DEFAULT '[]';
            -- "always allow this tool", per user (POST .../tool_calls/{id} with remember: true). Not a
            -- foreign key: local mode's user has no row in users; an account's delete removes its rows.
            CREATE TABLE tool_policies (
                user_id    TEXT NOT NULL,
                tool       TEXT NOT NULL,           -- a tool id, '<server>/<tool>'
                created_at INTEGER NOT NULL,        -- milliseconds since 1970
                PRIMARY KEY (user_id, tool)
            ) WITHOUT ROWID;
            """, step: allowAwaitingApproval),
    ]

    /// Widens the `messages.status` CHECK to admit `awaiting_approval`. SQLite cannot alter a CHECK; the
    /// procedure its documentation gives for a change that leaves every stored row valid ("ALTER TABLE",
    /// section 7: edit the table's SQL in sqlite_schema, then bump `schema_version` so every connection
    /// reads it again) is used instead of copying the whole table. Runs inside the migration's transaction.
    static let allowAwaitingApproval: @Sendable (SQLiteDatabase) throws(StoreError) -> Void = { database throws(StoreError) in
        let version = try database.queryFirst("PRAGMA schema_version") { $0.int64(0) } ?? 0
        try database.execute("PRAGMA writable_schema = ON")
        let changed = try database.run("""
            UPDATE sqlite_schema SET sql = replace(sql, '''interrupted''))', '''interrupted'', ''awaiting_approval''))')
            WHERE type = 'table' AND name = 'messages'
            """)
        try database.execute("PRAGMA schema_version = \(version + 1)")
        try database.execute("PRAGMA writable_schema = OFF")
        guard changed == 1 else { throw StoreError.corrupt("the messages table was not found to widen its status check") }
    }
}
