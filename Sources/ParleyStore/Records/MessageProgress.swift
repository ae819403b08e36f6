/// What a streaming reply has received so far, for the periodic group commit (`saveProgress`).
public struct MessageProgress: Sendable, Equatable {
    public let id: String
    public let content: String
    public let reasoning: String

    public init(id: String, content: String, reasoning: String = "") {
        self.id = id
        self.content = content
        self.reasoning = reasoning
    }
}
