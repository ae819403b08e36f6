import ParleyAPI
import ParleyEvents
import ParleyGeneration
import ParleyHTTP
import ParleyStore

/// A conversation started with its first message (`POST /api/conversations` with `message`): one
/// round trip where a new chat took two, with the send's own checks, admission, events and title job.
extension ConversationHandlers {
    /// Starts the checked and admitted `turn` in `conversation`, just created for it. A start refused now
    /// (the caps on live replies, the account disabled, a file deleted meanwhile, shutdown) deletes the
    /// conversation again, so a refused start leaves nothing behind. The other tabs hear of the
    /// conversation once its reply has started: `conversation_created`, then `turn` and `reply_started`.
    func start(_ turn: TurnRequest, in conversation: Conversation, _ caller: Caller) async throws -> HTTPResponse {
        let started: (user: Message, assistant: Message)
        do {
            started = try await messages.beginTurn(turn, in: conversation, caller)
        } catch {
            // No notification has named it yet: it goes with the start's error (and any
            // reply that was registered before the error, as a delete would stop it).
            await generations.stopAll(conversationID: conversation.id)
            _ = try? store.deleteConversation(id: conversation.id, ownedBy: caller.userID)
            throw error
        }
        // As it is now: its current leaf the new reply.
        let current = (try? store.conversation(id: conversation.id, ownedBy: caller.userID)) ?? conversation
        feed.conversationCreated(current)
        let pair = messages.announceTurn(started, of: turn, in: conversation, caller)
        return .json(ConversationStartResource(conversation: ConversationResource(current), turn: pair), status: 201)
    }
}
