import ParleyOutcome
import ParleyStore

/// The final state of one reply run, as it is written.
public struct ReplyEnd: Sendable {
    public var content: String
    public var reasoning: String
    public var status: MessageStatus
    public var finishReason: FinishReason?
    public var usage: ReplyTokens?
    public var model: String
    public var errorCode: ReplyErrorCode?
    public var errorMessage: String?
    /// The final render of `content` (of each text part, joined).
    public var html: String
    /// The parts, for a reply with tool calls (nil: its parts are its text's).
    public var parts: [MessagePart]?

    public init(content: String, reasoning: String, status: MessageStatus, finishReason: FinishReason?,
                usage: ReplyTokens?, model: String, errorCode: ReplyErrorCode?, errorMessage: String?, html: String,
                parts: [MessagePart]? = nil) {
        self.content = content
        self.reasoning = reasoning
        self.status = status
        self.finishReason = finishReason
        self.usage = usage
        self.model = model
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.html = html
        self.parts = parts
    }
}
