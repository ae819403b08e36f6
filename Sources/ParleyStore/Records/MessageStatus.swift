/// Where a message is in its life. Only `streaming` messages accept progress; every other status
/// is final until `Store.resumeStreaming(id:)` makes it `streaming` again.
public enum MessageStatus: String, Sendable, Equatable, CaseIterable {
    /// Being generated now (or was, when the process died: see `Store.markInterruptedAtStartup()`).
    case streaming
    case complete
    /// The user stopped it.
    case stopped
    case failed
    /// The process ended while it was streaming; its saved content is kept.
    case interrupted
    /// Paused until the user approves or denies its tool calls (issue 20); the decision resumes it, like
    /// a continue. Survives restarts.
    case awaitingApproval = "awaiting_approval"
}
