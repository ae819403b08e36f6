import ParleyProviders
import ParleyStore

/// How a reply begins. Send, regenerate and continue differ only in what they write; `Generations.start`
/// runs each through the same steps (prepare, admit, write, register).
public enum StartPlan: Sendable {
    /// A new user message where `placement` says, and its answer; `model` nil keeps the conversation's,
    /// `settings` (one call's own) go over the conversation's for this reply only, `options` to the provider.
    /// `clientTools`: an API client's own tools (`/v1`), offered to the model and relayed, never run.
    /// `fileIDs`: the stored files the user message carries (checked and recorded with it). `userParts`: the
    /// user message's own parts (a surface's action), nil for the parts its text gives.
    case send(conversationID: String, placement: TurnPlacement, content: String, model: String?,
              settings: GenerationSettings? = nil, options: ChatOptions = ChatOptions(), clientTools: [ToolSpec] = [],
              fileIDs: [String] = [], userParts: [MessagePart]? = nil)
    /// A new answer beside the assistant message `messageID`; `model` nil keeps that message's.
    case regenerate(messageID: String, model: String?)
    /// More text for a stopped, truncated, failed or interrupted answer, appended to it; or, for an
    /// answer whose client tools have their results (`/v1`), the model's next round after them.
    /// `settings`, `options` and `clientTools` are as for `send` (one API call's own).
    case continueReply(messageID: String, settings: GenerationSettings? = nil, options: ChatOptions = ChatOptions(),
                       clientTools: [ToolSpec] = [])
}
