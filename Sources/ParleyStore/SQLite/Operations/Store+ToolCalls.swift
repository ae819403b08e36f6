import Foundation
import ParleyPrimitives

extension Store {
    /// The result a denied call gets (what the model is told).
    public static let deniedResult = ToolCallResult.text("The user denied this tool call.", isError: true)

    // MARK: - Approvals

    /// Records the user's decision on one call of a reply that awaits approval, in one write transaction,
    /// so of two concurrent decisions exactly one is recorded (the other is a `conflict`). A denied call
    /// becomes `denied` with `deniedResult`; an approved one keeps `awaiting_approval` until the resumed
    /// reply runs it. Throws `notFound` for a message the owner does not have or an unknown call id,
    /// `conflict` when the message is not awaiting approval or the call was decided already.
    public func decideToolCall(
        messageID: String, callID: String, decision: ToolDecision, ownedBy owner: String
    ) throws(StoreError) -> ToolCallDecision {
        try write { (writer, now) throws(StoreError) in
            let database = writer.database
            let found = try database.queryFirst(
                """
                SELECT \(Message.columns(alias: "m")) FROM messages m
                JOIN conversations c ON c.id = m.conversation_id
                WHERE m.id = ? AND c.owner_id = ? \(database.dialect.forUpdate(of: "m"))
                """, [.text(messageID), .text(owner)], Message.init(row:))
            // (Locked on PostgreSQL: two nodes deciding the same call at once take turns, the second sees the first.)
            guard var message = found else { throw StoreError.notFound(.message(id: messageID)) }
            guard let index = message.parts.firstIndex(where: { $0.toolCall?.id == callID }),
                  var call = message.parts[index].toolCall else {
                throw StoreError.notFound(.toolCall(id: callID, messageID: messageID))
            }
            guard message.status == .awaitingApproval else {
                throw StoreError.conflict("message \(messageID) is \(message.status.rawValue), not awaiting approval")
            }
            guard call.status == .awaitingApproval, call.decision == nil else {
                throw StoreError.conflict("tool call \(callID) was decided already")
            }
            call.decision = decision
            if decision == .deny {
                call.status = .denied
                call.result = Self.deniedResult
            }
            message.parts[index] = .toolCall(call)
            try database.run("UPDATE messages SET parts = ?, updated_at = ? WHERE id = ?",
                             [.text(MessagePart.storedText(message.parts)), .integer(now), .text(messageID)])
            message.updatedAt = Date(millisecondsSince1970: now)
            let undecided = message.toolCalls.filter { $0.status == .awaitingApproval && $0.decision == nil }.count
            return ToolCallDecision(message: message, undecided: undecided)
        }
    }

    // MARK: - Policies

    /// Remembers "always allow `tool`" for the user (again is no change). Write transaction.
    public func rememberTool(_ tool: String, for userID: String) throws(StoreError) {
        try write { (writer, now) throws(StoreError) in
            _ = try writer.database.run(
                "INSERT INTO tool_policies (user_id, tool, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                [.text(userID), .text(tool), .integer(now)])
        }
    }

    /// Takes "always allow" back; false when there was none. Write transaction.
    @discardableResult
    public func forgetTool(_ tool: String, for userID: String) throws(StoreError) -> Bool {
        try write { (writer, _) throws(StoreError) in
            try writer.database.run("DELETE FROM tool_policies WHERE user_id = ? AND tool = ?",
                                    [.text(userID), .text(tool)]) > 0
        }
    }

    /// The user's remembered tools, by tool id. Read transaction.
    public func toolPolicies(for userID: String) throws(StoreError) -> [ToolPolicy] {
        try read { (database) throws(StoreError) in
            try database.query("SELECT tool, created_at FROM tool_policies WHERE user_id = ? ORDER BY tool",
                               [.text(userID)]) { row in
                ToolPolicy(tool: row.text(0), createdAt: Date(millisecondsSince1970: row.int64(1)))
            }
        }
    }

    // MARK: - A conversation's tools

    /// Sets the tools a conversation's replies may call (ids checked by the caller) and bumps
    /// `updatedAt`. Returns nil if the owner has no such conversation. Write transaction.
    public func setTools(_ tools: [String], conversationID: String,
                         ownedBy owner: String = User.localID) throws(StoreError) -> Conversation? {
        try write { (writer, now) throws(StoreError) in
            try writer.database.queryFirst(
                """
                UPDATE conversations SET tools = ?, updated_at = ? WHERE id = ? AND owner_id = ?
                RETURNING \(Conversation.columns)
                """,
                [.text(JSON.array(tools.map(JSON.string)).text), .integer(writer.nextConversationMilliseconds(now: now)),
                 .text(conversationID), .text(owner)],
                Conversation.init(row:))
        }
    }

    // MARK: - Startup

    /// The open tool calls (`streaming`, `running`) of replies that were streaming when the process
    /// died become `cancelled`: nothing will finish them. Called by `markInterruptedAtStartup` before
    /// the rows become `interrupted`.
    func cancelOpenToolCalls(_ database: Database) throws(StoreError) {
        let rows = try database.query(
            "SELECT id, parts FROM messages \(database.dialect.indexedBy("messages_streaming")) "
                + "WHERE status = 'streaming' AND parts IS NOT NULL"
        ) { row in (row.text(0), row.text(1)) }
        for (id, text) in rows {
            guard var parts = MessagePart.parts(storedText: text) else { continue }
            var changed = false
            for (index, part) in parts.enumerated() {
                guard var call = part.toolCall, call.status == .streaming || call.status == .running else { continue }
                call.status = .cancelled
                parts[index] = .toolCall(call)
                changed = true
            }
            if changed {
                try database.run("UPDATE messages SET parts = ? WHERE id = ?",
                                 [.text(MessagePart.storedText(parts)), .text(id)])
            }
        }
    }
}
