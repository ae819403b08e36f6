import ParleyOutcome
import ParleyPrimitives
import ParleyStore

/// One entry of a message's event log: what subscribers receive, in id order.
///
/// Ids are strictly increasing over the message's whole life, across `continue` and across server
/// restarts, because they are taken from a microsecond clock and never reused (see `EventIDClock`).
public struct GenerationEvent: Sendable {
    public let id: Int64
    public let payload: Payload

    public enum Payload: Sendable {
        /// The full state; first event of a connection that cannot be replayed exactly, and first
        /// event of a continued generation's log (it resets what a client shows).
        case snapshot(GenerationSnapshot)
        /// A Markdown block that can no longer change, as HTML (sent once).
        case block(index: Int, html: String)
        /// The raw, still-open tail; replaces the previous tail (sent when blocks were committed).
        case tail(String)
        /// Raw text appended to the current tail (sent while the open block only grows, so a long
        /// code block costs its length once instead of once per frame).
        case tailAppend(String)
        /// The open tail rendered provisionally (issue 18): the first `keep` UTF-16 code units of the
        /// previous one, then this HTML, replace the previous one; nil means none (show the raw tail).
        /// Never logged and sent without an `id:`: the next frame supersedes it, and a snapshot or a
        /// resume carries the whole current one (`keep` 0).
        case tailHTML(String?, keep: Int)
        /// Raw source text appended since the previous delta (text-mode clients).
        case delta(String)
        /// Reasoning appended since the previous reasoning event (plain text, both modes).
        case reasoning(String)
        case error(code: ReplyErrorCode, message: String)
        /// A tool call began, changed status, or its arguments are complete (then `arguments` is set).
        case toolCall(ToolCallPart)
        /// A fragment of a streaming call's arguments (`id` is Parley's call id).
        case toolCallDelta(id: String, argumentsDelta: String)
        /// A call's result (or why it has none: denied, cancelled), with its final status.
        case toolResult(ToolCallPart)
        /// A valid A2UI message of `parley/render_ui` for surface `surfaceID` (issue 22), sent as soon as
        /// it is complete and valid (a surface's first messages once its tree has `root`).
        case surface(surfaceID: String, message: JSON)
        /// Log probabilities of the answer text sent just before (OpenAI's `logprobs.content` items as the
        /// upstream wrote them), for a /v1 call that asked for them (`logprobs: true`). Logged, so a /v1
        /// relay gets them in order; never sent to a page (the reply stream drops them).
        case logprobs([JSON])
        /// Last event of a run; the stream ends after it. A run paused for approval (`awaiting_approval`)
        /// or stopped may be resumed or continued: its events then go on above this one's id.
        case done(GenerationOutcome)
    }

    public init(id: Int64, payload: Payload) {
        self.id = id
        self.payload = payload
    }

    /// Whether the event is provisional (`tail_html`): sent without an `id:` line, so it never moves a
    /// client's Last-Event-ID, and never in the replay log.
    public var isProvisional: Bool {
        if case .tailHTML = payload { return true }
        return false
    }

    /// An `error` for a stream that has no generation behind it (the message went away), with an
    /// id from the same clock as every other event.
    public static func failure(code: ReplyErrorCode, message: String) -> GenerationEvent {
        var ids = EventIDClock()
        return GenerationEvent(id: ids.next(), payload: .error(code: code, message: message))
    }
}

/// The state of a message at one point of its log.
public struct GenerationSnapshot: Sendable {
    public let messageID: String
    public let status: MessageStatus
    public let blocks: [String]
    public let tail: String
    /// The tail's current provisional HTML (`tail_html`); nil when there is none (html mode only).
    public let tailHTML: String?
    public let content: String
    public let reasoning: String
    /// The reply's parts in order; a text part names its blocks in `blocks` (the tail belongs to the last one).
    public let parts: [SnapshotPart]

    /// Every field is required (no default for `reasoning`): a builder that forgets one must not compile.
    public init(messageID: String, status: MessageStatus, blocks: [String], tail: String, tailHTML: String?,
                content: String, reasoning: String, parts: [SnapshotPart]) {
        self.messageID = messageID
        self.status = status
        self.blocks = blocks
        self.tail = tail
        self.tailHTML = tailHTML
        self.content = content
        self.reasoning = reasoning
        self.parts = parts
    }
}

/// One part of a reply as a snapshot carries it. A text part's HTML is `blocks[firstBlock..<firstBlock + blockCount]`
/// (block indices count across the whole reply), so a client places each text part and tool card in order.
public enum SnapshotPart: Sendable, Equatable {
    case text(String, firstBlock: Int, blockCount: Int)
    case reasoning(String)
    case toolCall(ToolCallPart)
    case surface(SurfacePart)
}

/// How a generation ended: what `done` carries.
public struct GenerationOutcome: Sendable {
    public let status: MessageStatus
    public let finishReason: FinishReason?
    /// Usage as stored (the provider's, or the store's estimate); nil when nothing was stored.
    public let usage: ReplyTokens?
    /// Committed blocks whose final render differs (a late link definition changed them).
    public let patch: [BlockPatch]
    /// Total number of blocks after the final render.
    public let blockCount: Int
    public let errorCode: ReplyErrorCode?
    public let errorMessage: String?

    public init(status: MessageStatus, finishReason: FinishReason?, usage: ReplyTokens?, patch: [BlockPatch],
                blockCount: Int, errorCode: ReplyErrorCode?, errorMessage: String?) {
        self.status = status
        self.finishReason = finishReason
        self.usage = usage
        self.patch = patch
        self.blockCount = blockCount
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }
}

/// A replacement for an already sent block.
public struct BlockPatch: Sendable, Equatable {
    public let index: Int
    public let html: String

    public init(index: Int, html: String) {
        self.index = index
        self.html = html
    }
}
