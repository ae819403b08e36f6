/// What a streaming reply has received so far, for the periodic group commit (`saveProgress`).
public struct MessageProgress: Sendable, Equatable {
    public let id: String
    public let content: String
    public let reasoning: String
    /// The parts so far, for a reply that has tool calls; nil keeps the stored ones (a reply of text alone
    /// stores none: its parts are its text's).
    public let parts: [MessagePart]?

    public init(id: String, content: String, reasoning: String = "", parts: [MessagePart]? = nil) {
        self.id = id
        self.content = content
        self.reasoning = reasoning
        self.parts = parts
    }
}
