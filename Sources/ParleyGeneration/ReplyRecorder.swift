import ParleyStore

/// Where a reply's progress and end are written. Why a protocol: a `Generation` needs these two
/// writes, not the whole `Store` (reads, accounts, search), and a test can record replies without SQLite.
/// `Store` is the recorder the server uses.
///
/// Concurrency: called from the `Generation` and `Generations` actors; each call is one short,
/// synchronous write transaction.
public protocol ReplyRecorder: Sendable {
    /// Ends a `streaming` message with its final state (`Store.finishMessage`); returns the row as stored,
    /// its usage completed by the store. Throws `StoreError.notFound` when the message was deleted meanwhile.
    func recordEnd(of messageID: String, _ end: ReplyEnd) throws(StoreError) -> Message

    /// The group commit of every live reply's text (`Store.saveProgress`), one transaction.
    func recordProgress(_ updates: [MessageProgress]) throws(StoreError)
}

extension Store: ReplyRecorder {
    public func recordEnd(of messageID: String, _ end: ReplyEnd) throws(StoreError) -> Message {
        try finishMessage(id: messageID, content: end.content, reasoning: end.reasoning, status: end.status,
                          finishReason: end.finishReason, usage: end.usage, model: end.model,
                          errorCode: end.errorCode, errorMessage: end.errorMessage, html: end.html, parts: end.parts)
    }

    public func recordProgress(_ updates: [MessageProgress]) throws(StoreError) {
        _ = try saveProgress(updates)
    }
}
