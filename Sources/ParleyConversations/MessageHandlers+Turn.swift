import ParleyAPI
import ParleyEvents
import ParleyGeneration
import ParleyHTTP
import ParleyQuotas
import ParleyStore

/// The one path a send takes, in three steps: read, check and admit (`admitTurn`), write and start the
/// reply (`beginTurn`), tell the other tabs and name the conversation (`announceTurn`). A send runs them
/// in a row; `POST /api/conversations` with a `message` creates the conversation between the first two.
extension MessageHandlers {
    /// Step 1: the body's fields, checked, then the caller's quotas (a message of the minute, the daily
    /// budget). `conversationID` nil: a conversation not made yet, whose first message has no
    /// `parent_id`; `storedModel`: the conversation's model.
    func admitTurn(_ body: JSONBody, conversationID: String?, storedModel: String?,
                   _ caller: Caller) async throws -> TurnRequest {
        if conversationID == nil, body.has("parent_id") {
            throw HTTPError(status: 400, code: "invalid_request",
                            message: "'message.parent_id': a new conversation's first message has no parent; leave it out.")
        }
        // Files: the caller's live files only (another user's id is 404 like an unknown one); a message
        // with files may have no text.
        var fileIDs = try body.strings("attachments", maxCount: files.maxAttachments, maxLength: 64) ?? []
        if let conversationID, body.has("parent_id"), !body.has("attachments") {
            fileIDs = try editedFiles(conversationID, parentID: try body.string("parent_id"), caller)
        }
        let attached = try store.liveFiles(ids: fileIDs, ownedBy: caller.userID)
        let content = attached.isEmpty ? try body.requiredString("content") : (try body.string("content") ?? "")
        // No parent_id: under the current leaf; a parent_id: a branch under it; null: a new root
        // (editing the first message).
        var placement = TurnPlacement.afterCurrentLeaf
        if body.has("parent_id") {
            placement = try body.string("parent_id").map { .under(messageID: $0) } ?? .root
        }
        let model = try await access.replyModel(requested: requestedModel(body), stored: storedModel, for: caller)
        if attached.contains(where: { $0.kind == .image }) {
            try await requireVision(model ?? storedModel)
        }
        try quotas.admit(caller)
        return TurnRequest(content: content, files: attached, placement: placement, model: model)
    }

    /// Step 2: the user message and its reply written, and the reply started (the caps on live replies
    /// are checked here).
    func beginTurn(_ turn: TurnRequest, in conversation: Conversation,
                   _ caller: Caller) async throws -> (user: Message, assistant: Message) {
        try await generations.send(conversationID: conversation.id, placement: turn.placement,
                                   content: turn.content, model: turn.model, owner: caller.userID,
                                   fileIDs: turn.files.map(\.id))
    }

    /// Step 3: the caller's other tabs told (`turn`, `reply_started`), the conversation named after its
    /// first reply (`conversation` as read before the turn); the answer's two messages.
    func announceTurn(_ started: (user: Message, assistant: Message), of turn: TurnRequest,
                      in conversation: Conversation, _ caller: Caller) -> TurnResource {
        feed.turnStarted(user: started.user, assistant: started.assistant, owner: caller.userID)
        titler.nameAfterFirstReply(of: conversation, question: started.user, reply: started.assistant,
                                   model: started.assistant.model)
        return TurnResource(userMessage: MessageResource(started.user, files: turn.files),
                            assistantMessage: MessageResource(started.assistant))
    }
}
