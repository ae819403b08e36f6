/// Why a generation request was refused. The API layer maps each case to an HTTP status.
public enum GenerationError: Error, Equatable, Sendable {
    /// The id names no message (404).
    case messageNotFound
    /// The id names no conversation (404).
    case conversationNotFound
    /// The operation needs an assistant message (400).
    case notAnAssistantMessage
    /// The message is still streaming (409).
    case alreadyStreaming
    /// The model id is not offered by any configured provider (400).
    case unknownModel(String)
    /// Too many live generations over all users (429).
    case tooManyGenerations(limit: Int)
    /// Too many live generations for this user (429).
    case tooManyGenerationsForUser(limit: Int)
    /// The message's parent chain is not what the operation needs (400).
    case invalidParent(String)
    /// The server is shutting down (503).
    case shuttingDown
    /// The account the reply would belong to has just been disabled (401, like its ended session).
    case ownerDisabled
    /// The reply waits for decisions on its tool calls; it resumes once each is decided (409).
    case awaitingApproval
}
