/// What a reply's start wrote, and what the model must answer, from one write transaction: the
/// branch is read where it was written, so a start costs one transaction and never sees a branch
/// another writer changed in between.
public struct ReplyStart: Sendable {
    /// The user message the start added (a send); nil for regenerate and continue.
    public let user: Message?
    /// The assistant message now `streaming`.
    public let reply: Message
    /// Root to the user message the reply answers, in order.
    public let context: [Message]

    public init(user: Message?, reply: Message, context: [Message]) {
        self.user = user
        self.reply = reply
        self.context = context
    }
}
