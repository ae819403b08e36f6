/// A source of model answers. Implementations are value types or immutable, and thread-safe.
///
/// `stream` starts the call when iterated; cancelling the consuming task (or dropping the stream)
/// cancels the upstream call at once. Failures are thrown as `ProviderError`.
///
/// The ParleyProviders module speaks each model server's dialect (OpenAI-compatible, Anthropic, the
/// demo) over `ParleyUpstream` and `ParleySSE`, and turns it into typed `ProviderEvent`s. It must never
/// know the store, conversations' trees, Markdown, HTTP serving or the browser: a `ChatRequest` in,
/// events out.
public protocol ChatProvider: Sendable {
    /// The prefix of this provider's model ids (`openai`, `anthropic`, `demo`).
    var name: String { get }
    /// True when a final assistant message is continued natively (a real prefill).
    var supportsPrefill: Bool { get }
    /// True when the provider sends `ChatRequest.tools` and streams the model's tool calls back.
    var supportsTools: Bool { get }
    func models() async -> [ModelInfo]
    func stream(_ request: ChatRequest) -> AsyncThrowingStream<ProviderEvent, Error>
    /// The same call as batches pulled in the consumer's isolation (`ProviderEventBatches`): how a
    /// reply reads it. By default `stream`'s events, one a batch.
    func events(_ request: ChatRequest) -> ProviderEventBatches
    /// The first of a call's options this provider cannot honour (its OpenAI parameter name), or nil;
    /// asked before anything is stored or sent (see `ChatOptions`; `refusal(_: ChatRequest)` also asks
    /// about the tools).
    func refusal(_ options: ChatOptions) -> String?
}

extension ChatProvider {
    public func events(_ request: ChatRequest) -> ProviderEventBatches {
        ProviderEventBatches(stream(request))
    }
}

/// A model as listed by `/api/models`: `id` is what clients send back (`openai:llama3`, `demo`).
public struct ModelInfo: Sendable, Equatable, Codable {
    public var id: String
    public var provider: String
    public var label: String

    public init(id: String, provider: String, label: String) {
        self.id = id
        self.provider = provider
        self.label = label
    }

    /// A provider's model, its id made by `ModelID`.
    public init(provider: String, model: String, label: String) {
        self.init(id: ModelID.make(provider: provider, model: model), provider: provider, label: label)
    }
}
