/// Module ParleyOutcome: how a reply ends, in types every stage shares. It must never know any
/// stage: no provider, store, HTTP or JSON type.
///
/// Why the model stopped, from the provider's stream to the stored row and the `done` event.
///
/// Why a module of its own: providers, the store and the server all speak it, and none of them may
/// depend on another for it (providers know nothing of the store). The text (`rawValue`) exists only at
/// the edges: the `finish_reason` column and JSON.
public enum FinishReason: Sendable, Equatable, Hashable, RawRepresentable, ExpressibleByStringLiteral {
    case stop
    /// The model's own length limit, or the reply cap (`PARLEY_MAX_REPLY_BYTES`).
    case length
    case toolCalls
    case contentFilter
    /// The reply reached Parley's limit of tool rounds (`PARLEY_MAX_TOOL_ROUNDS`) with the model asking for more.
    case toolRounds
    /// A reason this version has no case for, kept as given (a provider's own, an imported file's).
    case other(String)

    /// The stored and sent text: `stop`, `length`, `tool_calls`, `content_filter`, or the other reason as given.
    public var rawValue: String {
        switch self {
        case .stop: "stop"
        case .length: "length"
        case .toolCalls: "tool_calls"
        case .contentFilter: "content_filter"
        case .toolRounds: "tool_rounds"
        case .other(let value): value
        }
    }

    /// The reason a stored or imported text names; never fails (an unknown text is `.other`).
    public init(rawValue: String) {
        switch rawValue {
        case "stop": self = .stop
        case "length": self = .length
        case "tool_calls": self = .toolCalls
        case "content_filter": self = .contentFilter
        case "tool_rounds": self = .toolRounds
        default: self = .other(rawValue)
        }
    }

    /// A literal is read as stored text (fixtures and tests write `"stop"`).
    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }
}
