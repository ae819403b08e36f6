import ParleyProviders
import ParleyStore

/// Where the context builder gets a user message's files: the seam between a branch's messages and
/// the bytes or text stored for them (the store-backed source reads the message's `file` parts).
/// Generation never reads files itself, so it stays free of how and where they are kept.
///
/// Concurrency: called synchronously from the `Generations` actor while a reply starts, like the
/// store's other short reads; an implementation must be thread-safe and must not call back into
/// `Generations`.
public protocol AttachmentSource: Sendable {
    /// What `message` carries, in attachment order, without loading any bytes: what the context budget
    /// counts and what a note names when a file is left out. Empty for a message without files.
    func summaries(for message: Message) throws -> [AttachmentSummary]

    /// The files of `message` (image bytes, document text), in the same order and number as
    /// `summaries(for:)`. Called only for messages that are sent, so an old image left out of the
    /// context is never loaded.
    func attachments(for message: Message) throws -> [ChatAttachment]
}

extension AttachmentSource {
    /// By default, summaries of the loaded files (a source that can describe files more cheaply than
    /// it loads them should say so itself).
    public func summaries(for message: Message) throws -> [AttachmentSummary] {
        try attachments(for: message).map(AttachmentSummary.init)
    }
}

/// The source of a server without files: no message has any.
public struct NoAttachments: AttachmentSource {
    public init() {}

    public func summaries(for message: Message) throws -> [AttachmentSummary] { [] }
    public func attachments(for message: Message) throws -> [ChatAttachment] { [] }
}
