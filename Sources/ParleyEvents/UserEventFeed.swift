import ParleyGeneration
import ParleyStore

/// What the handlers tell a user's tabs when something changes, one call per change, made after the
/// change is stored (a tab that reads on a notification finds it). A reply that starts is watched
/// through `Generations.outcome(of:)`, so its end is told too.
package struct UserEventFeed: Sendable {
    package let hub: UserEventHub
    let generations: Generations

    package init(hub: UserEventHub, generations: Generations) {
        self.hub = hub
        self.generations = generations
    }

    package func conversationCreated(_ conversation: Conversation) {
        hub.publish(.conversationCreated(conversation), to: conversation.ownerID)
    }

    package func conversationUpdated(_ conversation: Conversation) {
        hub.publish(.conversationUpdated(conversation), to: conversation.ownerID)
    }

    package func conversationDeleted(id: String, owner: String) {
        hub.publish(.conversationDeleted(id: id), to: owner)
    }

    package func preferencesChanged(owner: String) {
        hub.publish(.preferencesChanged, to: owner)
    }

    /// A user message and its answer: `turn`, then `reply_started` (and later `reply_finished`).
    package func turnStarted(user: Message, assistant: Message, owner: String) {
        hub.publish(.turn(conversationID: assistant.conversationID, userMessageID: user.id,
                          assistantMessageID: assistant.id), to: owner)
        replyStarted(assistant, owner: owner)
    }

    /// `reply_started` now and `reply_finished` at the reply's `done`. The end is watched only for a user
    /// who has connected a tab since the server started (a user without one has nobody to tell, and a
    /// tab opened later reads the conversation and follows the reply itself): a start that nobody
    /// watches costs nothing more than before.
    package func replyStarted(_ message: Message, owner: String) {
        guard hub.hasChannel(for: owner) else { return }
        hub.publish(.replyStarted(conversationID: message.conversationID, messageID: message.id), to: owner)
        let hub = hub
        let generations = generations
        let conversationID = message.conversationID
        let messageID = message.id
        Task {
            // Throws only when the message is gone (its conversation was deleted): nothing to tell.
            guard let outcome = try? await generations.outcome(of: messageID) else { return }
            hub.publish(.replyFinished(conversationID: conversationID, messageID: messageID,
                                       status: outcome.status), to: owner)
        }
    }
}
