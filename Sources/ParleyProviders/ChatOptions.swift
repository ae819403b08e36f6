/// One call's OpenAI-style request options beyond the sampling settings (`stop`, `seed`, penalties,
/// `logprobs`, `user`, `response_format`), checked by the caller and passed on as given. A provider
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

    public var stop: Stop?
    public var seed: Int?
    public var presencePenalty: Double?
    public var frequencyPenalty: Double?
    public var logprobs: Bool?
    public var topLogprobs: Int?
    /// An end-user id: metadata, which a provider may pass on or keep to itself.
    public var user: String?
    public var responseFormat: ResponseFormat?

    public init(stop: Stop? = nil, seed: Int? = nil, presencePenalty: Double? = nil, frequencyPenalty: Double? = nil,
                logprobs: Bool? = nil, topLogprobs: Int? = nil, user: String? = nil,
                responseFormat: ResponseFormat? = nil) {
        self.stop = stop
        self.seed = seed
        self.presencePenalty = presencePenalty
        self.frequencyPenalty = frequencyPenalty
        self.logprobs = logprobs
        self.topLogprobs = topLogprobs
        self.user = user
        self.responseFormat = responseFormat
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
        return names
    }
}

extension ChatProvider {
    /// The first option this provider cannot honour (its OpenAI parameter name), or nil. By default a
    /// provider honours none: a new provider refuses rather than ignores.
    public func refusal(_ options: ChatOptions) -> String? {
        options.demands.first
    }
}
