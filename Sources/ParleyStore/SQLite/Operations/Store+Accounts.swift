import Foundation

extension Store {
    // MARK: - Users

    /// Creates an account. Throws `conflict` when the username is taken (in any case). Write transaction.
    public func createUser(username: String, displayName: String, role: User.Role,
                           passwordHash: String?) throws(StoreError) -> User {
        try write { (writer, now) throws(StoreError) in
            let taken = try writer.database.queryFirst(
                "SELECT 1 FROM users WHERE username = ?", [.text(username)]) { (_: Row) in true } ?? false
            if taken { throw StoreError.conflict("the username \(username) is taken") }
            let created = try writer.database.queryFirst(
                """
                INSERT INTO users (id, username, display_name, role, disabled, password_hash, created_at)
                VALUES (?, ?, ?, ?, 0, ?, ?) RETURNING \(User.columns)
                """,
                [.text(RecordID.make()), .text(username), .text(displayName), .text(role.rawValue),
                 .optionalText(passwordHash), .integer(now)],
                { User(row: $0) })
            guard let created else { throw StoreError.corrupt("INSERT returned no user") }
            return created
        }
    }

    /// Read transaction.
    public func user(id: String) throws(StoreError) -> User? {
        try read { (database) throws(StoreError) in
            try database.queryFirst("SELECT \(User.columns) FROM users WHERE id = ?", [.text(id)], { User(row: $0) })
        }
    }

    /// The account with this username, compared without case. Read transaction.
    public func user(username: String) throws(StoreError) -> User? {
        try read { (database) throws(StoreError) in
            try database.queryFirst(
                "SELECT \(User.columns) FROM users WHERE username = ?", [.text(username)], { User(row: $0) })
        }
    }

    /// Every account, oldest first (in the order they were added when created in the same
    /// millisecond: ids are random, rowids are not). Read transaction.
    public func users() throws(StoreError) -> [User] {
        try read { (database) throws(StoreError) in
            try database.query("SELECT \(User.columns) FROM users ORDER BY created_at, rowid", [], { User(row: $0) })
        }
    }

    /// Changes the given fields (nil leaves one as it is). Refuses, with `conflict`, to demote or
    /// disable the last enabled admin. Disabling also deletes the user's sessions and tokens.
    /// Returns nil for an unknown id. Write transaction.
    public func updateUser(id: String, role: User.Role? = nil, disabled: Bool? = nil, passwordHash: String? = nil,
                           displayName: String? = nil) throws(StoreError) -> User? {
        try write { (writer, _) throws(StoreError) in
            let database = writer.database
            guard let current = try database.queryFirst(
                "SELECT \(User.columns) FROM users WHERE id = ?", [.text(id)], { User(row: $0) }) else { return nil }
            let losesAdmin = current.role == .admin && !current.disabled
                && (role == .member || disabled == true)
            if losesAdmin {
                let others = try database.queryFirst(
                    "SELECT count(*) FROM users WHERE role = 'admin' AND disabled = 0 AND id != ?", [.text(id)]
                ) { $0.int64(0) } ?? 0
                if others == 0 { throw StoreError.conflict("the last admin cannot be demoted or disabled") }
            }
            if disabled == true {
                try database.run("DELETE FROM sessions WHERE user_id = ?", [.text(id)])
                try database.run("DELETE FROM api_tokens WHERE user_id = ?", [.text(id)])
            }
            return try database.queryFirst(
                """
                UPDATE users SET role = coalesce(?2, role), disabled = coalesce(?3, disabled),
                    password_hash = coalesce(?4, password_hash), display_name = coalesce(?5, display_name)
                WHERE id = ?1 RETURNING \(User.columns)
                """,
                [.text(id), .optionalText(role?.rawValue), disabled.map { .bool($0) } ?? .null,
                 .optionalText(passwordHash), .optionalText(displayName)],
                { User(row: $0) })
        }
    }

    /// Gives local mode's conversations to `userID` (the first admin, when a server moves to team
    /// mode), and local mode's files with them (their messages show them only to the files' owner).
    /// Returns how many conversations moved. Write transaction.
    @discardableResult
    public func assignLocalConversations(to userID: String) throws(StoreError) -> Int {
        try write { (writer, _) throws(StoreError) in
            // A file of the same upload `userID` already has stays local (a new admin has none): what
            // SQLite's UPDATE OR IGNORE did, written so PostgreSQL runs it too.
            try writer.database.run(
                """
                UPDATE files SET owner_id = ?1 WHERE owner_id = ?2 AND NOT EXISTS
                    (SELECT 1 FROM files held WHERE held.owner_id = ?1 AND held.upload_sha256 = files.upload_sha256)
                """,
                [.text(userID), .text(User.localID)])
            return try writer.database.run("UPDATE conversations SET owner_id = ? WHERE owner_id = ?",
                                           [.text(userID), .text(User.localID)])
        }
    }

    /// The sum of the replies' output tokens, each clamped into `ReplyTokens.range` (SQLite).
    private static let sqliteOutputTokens = """
        coalesce(sum(CASE WHEN m.role = 'assistant' AND json_valid(m.usage)
                     THEN max(0, min(\(ReplyTokens.maximum),
                                     CAST(json_extract(m.usage, '$.output_tokens') AS INTEGER))) END), 0)
        """
    /// The same on PostgreSQL, from the usage parsed when it was written (`messages.usage_json`). A
    /// missing count adds 0 (SQLite's min() of NULL is NULL, which sum() skips; LEAST skips NULLs).
    private static let postgresOutputTokens = """
        coalesce(sum(CASE WHEN m.role = 'assistant' AND m.usage_json IS NOT NULL
                     THEN GREATEST(0, LEAST(\(ReplyTokens.maximum),
                                           trunc(coalesce(parley_jsonb_count(m.usage_json -> 'output_tokens'), 0)))) END), 0)::BIGINT
        """

    /// Counts of the user's conversations, messages and replies, and the output tokens their replies
    /// reported: one pass over the user's messages (by the conversation index), reading no content.
    /// Each reply's count is clamped into `ReplyTokens.range` as it is read (rows stored before the
    /// bound may hold anything), so the sum cannot overflow short of 9.2 billion replies. Read transaction.
    public func usage(userID: String) throws(StoreError) -> UserUsage {
        try read { (database) throws(StoreError) in
            try database.queryFirst(
                """
                SELECT (SELECT count(*) FROM conversations WHERE owner_id = ?1),
                    count(m.id),
                    count(CASE WHEN m.role = 'assistant' THEN 1 END),
                    \(database.dialect == .sqlite ? Self.sqliteOutputTokens : Self.postgresOutputTokens),
                    CASE WHEN coalesce(max(c.updated_at), 0) > coalesce(max(m.updated_at), 0)
                         THEN coalesce(max(c.updated_at), 0) ELSE coalesce(max(m.updated_at), 0) END
                FROM conversations c LEFT JOIN messages m ON m.conversation_id = c.id
                WHERE c.owner_id = ?1
                """,
                [.text(userID)]
            ) { row in
                let last = row.int64(4)
                return UserUsage(conversations: Int(row.int64(0)), messages: Int(row.int64(1)),
                                 assistantReplies: Int(row.int64(2)), outputTokens: Int(row.int64(3)),
                                 lastActivity: last > 0 ? Date(millisecondsSince1970: last) : nil)
            } ?? UserUsage(conversations: 0, messages: 0, assistantReplies: 0, outputTokens: 0, lastActivity: nil)
        }
    }

    // MARK: - Sessions

    /// Records a sign-in; `digest` is the digest of the secret the client keeps. Write transaction.
    public func createSession(userID: String, digest: String, userAgent: String) throws(StoreError) -> Credential {
        try write { (writer, now) throws(StoreError) in
            let id = RecordID.make()
            try writer.database.run(
                """
                INSERT INTO sessions (id, user_id, token_digest, user_agent, created_at, last_used_at)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
                [.text(id), .text(userID), .text(digest), .text(String(userAgent.prefix(300))), .integer(now),
                 .integer(now)])
            return Credential(id: id, kind: .session, userID: userID, label: userAgent,
                              createdAt: Date(millisecondsSince1970: now), lastUsedAt: Date(millisecondsSince1970: now))
        }
    }

    /// The live session with this digest and its enabled user: not idle since `idleCutoff` and not
    /// created before `lifetimeCutoff`. Marks it used (at most once a minute, to spare the writer).
    public func session(digest: String, idleCutoff: Date, lifetimeCutoff: Date) throws(StoreError)
        -> (session: Credential, user: User)? {
        let found = try read { (database) throws(StoreError) in
            try database.queryFirst(
                """
                SELECT s.id, s.user_agent, s.created_at, s.last_used_at, \(Self.userColumns("u"))
                FROM sessions s JOIN users u ON u.id = s.user_id
                WHERE s.token_digest = ? AND u.disabled = 0 AND s.last_used_at >= ? AND s.created_at >= ?
                """,
                [.text(digest), .integer(idleCutoff.millisecondsSince1970),
                 .integer(lifetimeCutoff.millisecondsSince1970)]
            ) { row in
                (Credential(id: row.text(0), kind: .session, userID: row.text(4), label: row.text(1),
                            createdAt: Date(millisecondsSince1970: row.int64(2)),
                            lastUsedAt: Date(millisecondsSince1970: row.int64(3))),
                 User(row: row, offset: 4))
            }
        }
        guard let (session, user) = found else { return nil }
        try touch(table: "sessions", id: session.id, lastUsed: session.lastUsedAt)
        return (session, user)
    }

    /// The user's sessions, newest first. Read transaction.
    public func sessions(userID: String) throws(StoreError) -> [Credential] {
        try read { (database) throws(StoreError) in
            try database.query(
                "SELECT id, user_agent, created_at, last_used_at FROM sessions WHERE user_id = ? ORDER BY created_at DESC, id",
                [.text(userID)]
            ) { row in
                Credential(id: row.text(0), kind: .session, userID: userID, label: row.text(1),
                           createdAt: Date(millisecondsSince1970: row.int64(2)),
                           lastUsedAt: Date(millisecondsSince1970: row.int64(3)))
            }
        }
    }

    /// Ends one of the user's sessions; false when the user has no such session. Write transaction.
    @discardableResult
    public func deleteSession(id: String, userID: String) throws(StoreError) -> Bool {
        try write { (writer, _) throws(StoreError) in
            try writer.database.run("DELETE FROM sessions WHERE id = ? AND user_id = ?", [.text(id), .text(userID)]) > 0
        }
    }

    /// Ends the user's least recently used sessions past the newest `keeping`. Write transaction.
    @discardableResult
    public func trimSessions(userID: String, keeping: Int) throws(StoreError) -> Int {
        try write { (writer, _) throws(StoreError) in
            try writer.database.run(
                """
                DELETE FROM sessions WHERE user_id = ?1 AND id NOT IN (
                    SELECT id FROM sessions WHERE user_id = ?1 ORDER BY last_used_at DESC, id LIMIT ?2)
                """,
                [.text(userID), .integer(Int64(keeping))])
        }
    }

    /// Deletes every session idle since `idleCutoff` or made before `lifetimeCutoff` (they can no
    /// longer sign anyone in; at start, so the table does not grow for ever). Write transaction.
    @discardableResult
    public func deleteExpiredSessions(idleCutoff: Date, lifetimeCutoff: Date) throws(StoreError) -> Int {
        try write { (writer, _) throws(StoreError) in
            try writer.database.run("DELETE FROM sessions WHERE last_used_at < ? OR created_at < ?",
                                    [.integer(idleCutoff.millisecondsSince1970),
                                     .integer(lifetimeCutoff.millisecondsSince1970)])
        }
    }

    /// Ends every session of the user but `keeping` (the caller's own, after a password change).
    @discardableResult
    public func deleteSessions(userID: String, keeping: String? = nil) throws(StoreError) -> Int {
        try write { (writer, _) throws(StoreError) in
            try writer.database.run("DELETE FROM sessions WHERE user_id = ? AND id != ?",
                                    [.text(userID), .text(keeping ?? "")])
        }
    }

    // MARK: - API tokens

    /// Records a new API token by the digest of its secret; `conflict` when the user already holds
    /// `limit` tokens. Write transaction.
    public func createToken(userID: String, name: String, digest: String, limit: Int = .max) throws(StoreError)
        -> Credential {
        try write { (writer, now) throws(StoreError) in
            let held = try writer.database.queryFirst(
                "SELECT count(*) FROM api_tokens WHERE user_id = ?", [.text(userID)]) { (row: Row) in row.int64(0) } ?? 0
            if held >= limit {
                throw StoreError.conflict("a user may hold at most \(limit) API tokens; revoke one first")
            }
            let id = RecordID.make()
            try writer.database.run(
                "INSERT INTO api_tokens (id, user_id, name, token_digest, created_at) VALUES (?, ?, ?, ?, ?)",
                [.text(id), .text(userID), .text(name), .text(digest), .integer(now)])
            return Credential(id: id, kind: .apiToken, userID: userID, label: name,
                              createdAt: Date(millisecondsSince1970: now), lastUsedAt: nil)
        }
    }

    /// The token with this digest and its enabled user; marks it used (at most once a minute).
    public func token(digest: String) throws(StoreError) -> (token: Credential, user: User)? {
        let found = try read { (database) throws(StoreError) in
            try database.queryFirst(
                """
                SELECT t.id, t.name, t.created_at, t.last_used_at, \(Self.userColumns("u"))
                FROM api_tokens t JOIN users u ON u.id = t.user_id
                WHERE t.token_digest = ? AND u.disabled = 0
                """,
                [.text(digest)]
            ) { row in
                (Credential(id: row.text(0), kind: .apiToken, userID: row.text(4), label: row.text(1),
                            createdAt: Date(millisecondsSince1970: row.int64(2)),
                            lastUsedAt: row.optionalInt64(3).map(Date.init(millisecondsSince1970:))),
                 User(row: row, offset: 4))
            }
        }
        guard let (token, user) = found else { return nil }
        try touch(table: "api_tokens", id: token.id, lastUsed: token.lastUsedAt)
        return (token, user)
    }

    /// The user's tokens, newest first (no secrets: only digests are stored). Read transaction.
    public func tokens(userID: String) throws(StoreError) -> [Credential] {
        try read { (database) throws(StoreError) in
            try database.query(
                "SELECT id, name, created_at, last_used_at FROM api_tokens WHERE user_id = ? ORDER BY created_at DESC, id",
                [.text(userID)]
            ) { row in
                Credential(id: row.text(0), kind: .apiToken, userID: userID, label: row.text(1),
                           createdAt: Date(millisecondsSince1970: row.int64(2)),
                           lastUsedAt: row.optionalInt64(3).map(Date.init(millisecondsSince1970:)))
            }
        }
    }

    /// Whether the session (`session: true`) or API token with this id still exists: a stream admitted
    /// just after its credential was revoked is refused by this second look. Read transaction.
    public func credentialExists(id: String, session: Bool) throws(StoreError) -> Bool {
        try read { (database) throws(StoreError) in
            try database.queryFirst(session ? "SELECT 1 FROM sessions WHERE id = ?" : "SELECT 1 FROM api_tokens WHERE id = ?",
                                    [.text(id)]) { _ in true } ?? false
        }
    }

    /// Revokes one of the user's tokens; false when the user has no such token. Write transaction.
    @discardableResult
    public func deleteToken(id: String, userID: String) throws(StoreError) -> Bool {
        try write { (writer, _) throws(StoreError) in
            try writer.database.run("DELETE FROM api_tokens WHERE id = ? AND user_id = ?", [.text(id), .text(userID)]) > 0
        }
    }

    /// Revokes every token of the user (an admin's password reset). Write transaction.
    @discardableResult
    public func deleteTokens(userID: String) throws(StoreError) -> Int {
        try write { (writer, _) throws(StoreError) in
            try writer.database.run("DELETE FROM api_tokens WHERE user_id = ?", [.text(userID)])
        }
    }

    // MARK: - Helpers

    private static func userColumns(_ alias: String) -> String {
        User.columns.split(separator: ",").map { "\(alias).\($0.trimmingCharacters(in: .whitespaces))" }
            .joined(separator: ", ")
    }

    /// Moves `last_used_at` to now when it is more than a minute old (a write per request would
    /// serialise every request on the writer).
    private func touch(table: String, id: String, lastUsed: Date?) throws(StoreError) {
        if let lastUsed, now().timeIntervalSince(lastUsed) < 60 { return }
        try write { (writer, now) throws(StoreError) in
            _ = try writer.database.run("UPDATE \(table) SET last_used_at = ? WHERE id = ?", [.integer(now), .text(id)])
        }
    }
}
