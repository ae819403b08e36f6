import ParleyPrimitives

/// One call's OpenAI-style request options beyond the sampling settings (`stop`, `seed`, penalties,
/// `logprobs`, `user`, `response_format`, `tool_choice`, `parallel_tool_calls`), checked by the caller and passed on as given. A provider
/// either honours each option that is set or names it in `refusal` ("nothing is silently ignored");
/// nil everywhere (the default) asks for nothing.
public struct ChatOptions: Sendable, Equatable {
    /// `stop`: one string or a list, kept in the form the client sent it.
    public enum Stop: Sendable, Equatable {
        case one(String)
        case many([String])

        public var sequences: [String] {
            switch self {
            case .one(let text): [text]
            case .many(let texts): texts
            }
        }
    }

    /// `response_format`: its `type` (what a provider decides on) and its JSON (what an OpenAI-compatible
    /// upstream receives, schema and all: the client's value, keys sorted).
    public struct ResponseFormat: Sendable, Equatable {
        public enum Kind: String, Sendable {
            case text
            case jsonObject = "json_object"
            case jsonSchema = "json_schema"
        }

        public var kind: Kind
        public var json: String

        public init(kind: Kind, json: String) {
            self.kind = kind
            self.json = json
        }
    }

    /// `tool_choice`: whether and which function the model must call. An OpenAI-compatible upstream gets
    /// it in the client's JSON form (`openAIJSON`); Anthropic gets its own (`tool_choice.type`).
    public enum ToolChoice: Sendable, Equatable {
        case auto
        case none
        case required
        /// This function, by its name.
        case function(String)

        /// OpenAI's form: `"auto"`, `"none"`, `"required"` or `{"type":"function","function":{"name":…}}`.
        public var openAIJSON: JSON {
            switch self {
            case .auto: .string("auto")
            case .none: .string("none")
            case .required: .string("required")
            case .function(let name): .object(["type": .string("function"), "function": .object(["name": .string(name)])])
            }
        }
    }

    public var stop: Stop?
    public var seed: Int?
    public var presencePenalty: Double?
    public var frequencyPenalty: Double?
    public var logprobs: Bool?
    public var topLogprobs: Int?
    /// An end-user id: metadata, which a provider may pass on or keep to itself.
    public var user: String?
    public var responseFormat: ResponseFormat?
    public var toolChoice: ToolChoice?
    /// `parallel_tool_calls`: false asks for at most one call per answer.
    public var parallelToolCalls: Bool?

    public init(stop: Stop? = nil, seed: Int? = nil, presencePenalty: Double? = nil, frequencyPenalty: Double? = nil,
                logprobs: Bool? = nil, topLogprobs: Int? = nil, user: String? = nil,
                responseFormat: ResponseFormat? = nil, toolChoice: ToolChoice? = nil, parallelToolCalls: Bool? = nil) {
        self.stop = stop
        self.seed = seed
        self.presencePenalty = presencePenalty
        self.frequencyPenalty = frequencyPenalty
        self.logprobs = logprobs
        self.topLogprobs = topLogprobs
        self.user = user
        self.responseFormat = responseFormat
        self.toolChoice = toolChoice
        self.parallelToolCalls = parallelToolCalls
    }

    /// The OpenAI names of the options that ask a model for something (all but `user`, metadata, and
    /// the no-op values `logprobs: false` and `response_format: text`), in the request's order.
    public var demands: [String] {
        var names: [String] = []
        if stop != nil { names.append("stop") }
        if seed != nil { names.append("seed") }
        if presencePenalty != nil { names.append("presence_penalty") }
        if frequencyPenalty != nil { names.append("frequency_penalty") }
        if logprobs == true { names.append("logprobs") }
        if topLogprobs != nil { names.append("top_logprobs") }
        if let responseFormat, responseFormat.kind != .text { names.append("response_format") }
        if toolChoice != nil { names.append("tool_choice") }
        if parallelToolCalls != nil { names.append("parallel_tool_calls") }
        return names
    }
}

extension ChatProvider {
    /// The first option this provider cannot honour (its OpenAI parameter name), or nil. By default a
    /// provider honours none: a new provider refuses rather than ignores.
    public func refusal(_ options: ChatOptions) -> String? {
        options.demands.first
    }

    /// The first part of `request` this provider cannot honour: `tools` when it has tools and the
    /// provider calls none (`supportsTools`), else its first refused option.
    public func refusal(_ request: ChatRequest) -> String? {
        if !request.tools.isEmpty, !supportsTools { return "tools" }
        return refusal(request.options)
    }
}
