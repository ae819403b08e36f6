/// A decision recorded on a tool call (`Store.decideToolCall`): the message as it now is, and how
/// many of its calls still wait for one. At zero the reply resumes.
public struct ToolCallDecision: Sendable, Equatable {
    public let message: Message
    public let undecided: Int

    public init(message: Message, undecided: Int) {
        self.message = message
        self.undecided = undecided
    }
}
