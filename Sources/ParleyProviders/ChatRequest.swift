/// One turn of a conversation as sent to a model.
public struct ChatMessage: Sendable, Equatable {
    public enum Role: String, Sendable {
        case system, user, assistant
    }

    public var role: Role
    public var content: String

    public init(role: Role, content: String) {
        self.role = role
        self.content = content
    }
}

/// What to ask a provider. `model` is the provider's own model name (no `openai:` prefix).
public struct ChatRequest: Sendable, Equatable {
    public var model: String
    public var messages: [ChatMessage]
    /// A partial assistant answer to continue (sent as a final assistant message).
    public var prefill: String?
    public var maxTokens: Int?
    /// Sampling settings (the conversation's, or one OpenAI-style call's); nil: the provider's default.
    public var temperature: Double?
    public var topP: Double?
    /// One OpenAI-style call's further options (none by default); the provider has accepted them (`refusal`).
    public var options: ChatOptions

    public init(model: String, messages: [ChatMessage], prefill: String? = nil, maxTokens: Int? = nil,
                temperature: Double? = nil, topP: Double? = nil, options: ChatOptions = ChatOptions()) {
        self.model = model
        self.messages = messages
        self.prefill = prefill
        self.maxTokens = maxTokens
        self.temperature = temperature
        self.topP = topP
        self.options = options
    }
}
