import ParleyOutcome
import ParleyPrimitives

/// One step of a model's answer, in the order the provider produced it. A successful stream ends
/// with exactly one `.finish`, preceded by at most one `.usage`.
public enum ProviderEvent: Sendable, Equatable {
    case text(String)
    case reasoning(String)
    case toolCall(ToolCallDelta)
    /// Log probabilities of the tokens just streamed: OpenAI's `choices[0].logprobs.content` items as
    /// the upstream wrote them (`token`, `logprob`, `bytes`, `top_logprobs`), in order.
    case logprobs([JSON])
    case usage(Usage)
    case finish(FinishReason)
}

/// A fragment of a tool call. `id` and `name` are set on the first fragment of a call (by `index`)
/// only; `argumentsDelta` is to be concatenated in order.
public struct ToolCallDelta: Sendable, Equatable {
    public var index: Int
    public var id: String?
    public var name: String?
    public var argumentsDelta: String

    public init(index: Int, id: String? = nil, name: String? = nil, argumentsDelta: String = "") {
        self.index = index
        self.id = id
        self.name = name
        self.argumentsDelta = argumentsDelta
    }
}

/// Token counts as reported by the upstream (either may be missing).
public struct Usage: Sendable, Equatable {
    public var inputTokens: Int?
    public var outputTokens: Int?

    public init(inputTokens: Int? = nil, outputTokens: Int? = nil) {
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
    }
}

/// Why the model stopped (`ParleyOutcome.FinishReason`, named here too so provider code reads as before).
public typealias FinishReason = ParleyOutcome.FinishReason
