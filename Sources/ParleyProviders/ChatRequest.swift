import ParleyPrimitives

/// One turn of a conversation as sent to a model. An assistant turn may end with tool calls; each
/// call's result follows as a `.tool` turn naming it (`toolCallID`), in call order. A provider writes
/// them in its own dialect (OpenAI `tool_calls` + `role: tool`; Anthropic `tool_use` + `tool_result` blocks).
/// A user turn may carry files (`attachments`): documents go before its text, images as image parts.
public struct ChatMessage: Sendable, Equatable {
    public enum Role: String, Sendable {
        case system, user, assistant, tool
    }

    public var role: Role
    public var content: String
    /// An assistant turn's tool calls, in order (empty otherwise).
    public var toolCalls: [ChatToolCall]
    /// A `.tool` turn: the call it answers (the provider's id).
    public var toolCallID: String?
    /// A `.tool` turn: the result is an error (Anthropic `is_error`; OpenAI has no such flag).
    public var isError: Bool
    /// A user turn's files, in the order the user attached them (empty otherwise). A turn without any
    /// is sent exactly as before attachments existed.
    public var attachments: [ChatAttachment]

    public init(role: Role, content: String, toolCalls: [ChatToolCall] = [], toolCallID: String? = nil,
                isError: Bool = false, attachments: [ChatAttachment] = []) {
        self.role = role
        self.content = content
        self.toolCalls = toolCalls
        self.toolCallID = toolCallID
        self.isError = isError
        self.attachments = attachments
    }

    /// The result of one tool call, answering `id`.
    public static func toolResult(id: String, content: String, isError: Bool) -> ChatMessage {
        ChatMessage(role: .tool, content: content, toolCallID: id, isError: isError)
    }
}

/// A tool call as a model made it: the provider's id, the function name the provider saw and the
/// arguments (a JSON object's text as the model wrote it).
public struct ChatToolCall: Sendable, Equatable {
    public var id: String
    public var name: String
    public var arguments: String

    public init(id: String, name: String, arguments: String) {
        self.id = id
        self.name = name
        self.arguments = arguments
    }
}

/// A function a model may call: its provider-facing name (`^[a-zA-Z0-9_-]{1,64}$`), what it does, and
/// its input JSON Schema (OpenAI `function.parameters`, Anthropic `input_schema`).
public struct ToolSpec: Sendable, Equatable {
    public var name: String
    public var description: String
    public var parameters: JSON

    public init(name: String, description: String, parameters: JSON) {
        self.name = name
        self.description = description
        self.parameters = parameters
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
    /// The functions the model may call (none by default).
    public var tools: [ToolSpec]

    public init(model: String, messages: [ChatMessage], prefill: String? = nil, maxTokens: Int? = nil,
                temperature: Double? = nil, topP: Double? = nil, options: ChatOptions = ChatOptions(),
                tools: [ToolSpec] = []) {
        self.model = model
        self.messages = messages
        self.prefill = prefill
        self.maxTokens = maxTokens
        self.temperature = temperature
        self.topP = topP
        self.options = options
        self.tools = tools
    }
}
