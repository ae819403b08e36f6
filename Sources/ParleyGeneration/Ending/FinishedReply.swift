import ParleyMarkdown
import ParleyStore

/// A reply that has ended, as a client attaching after the end receives it: a snapshot of the final
/// state, the `error` of a failed or interrupted reply, and `done`.
///
/// The one place these events are built, whether the generation is still in memory
/// (`Generation.subscribe`) or the message is read from the store (`Generations.subscribe` after
/// `retainFinished`, or after a restart). The two used to be built apart and drifted: the store's
/// snapshot forgot the reasoning.
struct FinishedReply: Sendable {
    let messageID: String
    let content: String
    let reasoning: String
    /// The final render: every block, in order.
    let blocks: [String]
    let parts: [SnapshotPart]
    let outcome: GenerationOutcome

    init(messageID: String, content: String, reasoning: String, blocks: [String], parts: [SnapshotPart],
         outcome: GenerationOutcome) {
        self.messageID = messageID
        self.content = content
        self.reasoning = reasoning
        self.blocks = blocks
        self.parts = parts
        self.outcome = outcome
    }

    /// A stored message that no generation holds, each text part rendered on its own. A row still
    /// `streaming` then has nothing that could finish it (its generation died with the process): it
    /// reads as `interrupted`, its open tool calls `cancelled`.
    init(stored message: Message, renderer: MarkdownRenderer) {
        let status = message.status == .streaming ? MessageStatus.interrupted : message.status
        var rendered = ReplyParts(closed: message.parts, renderer: renderer)
        if status == .interrupted { _ = rendered.cancelOpenCalls(includingAwaiting: true) }
        let blocks = rendered.closedBlocks
        self.init(messageID: message.id, content: message.content, reasoning: message.reasoning, blocks: blocks,
                  parts: rendered.snapshot(text: "", reasoning: "", liveBlocks: 0),
                  outcome: GenerationOutcome(status: status, finishReason: message.finishReason, usage: message.usage,
                                             patch: [], blockCount: blocks.count, errorCode: message.errorCode,
                                             errorMessage: message.errorMessage))
    }

    /// Snapshot, `error` (only when the outcome has an error code), `done`, with the given ids.
    func events(snapshotID: Int64, errorID: Int64, doneID: Int64) -> [GenerationEvent] {
        let snapshot = GenerationSnapshot(messageID: messageID, status: outcome.status, blocks: blocks, tail: "", tailHTML: nil,
                                          content: content, reasoning: reasoning, parts: parts)
        var events = [GenerationEvent(id: snapshotID, payload: .snapshot(snapshot))]
        if let code = outcome.errorCode {
            events.append(GenerationEvent(id: errorID, payload: .error(code: code, message: outcome.errorMessage ?? "")))
        }
        events.append(GenerationEvent(id: doneID, payload: .done(outcome)))
        return events
    }
}
