import ParleyUpstream
import Synchronization

/// The configured providers, and the mapping from a model id (`openai:llama3`, `anthropic:claude-x`,
/// `demo`) to a provider and its own model name. Thread-safe.
///
/// The demo model is listed only when no other provider is configured, but is always accepted.
/// An unprefixed name is accepted when exactly one provider lists it (from the last `models()` call
/// or the configured lists).
public final class ProviderRegistry: Sendable {
    public let providers: [any ChatProvider]
    public let demo: DemoProvider
    /// Which models are sent images (PARLEY_VISION_MODELS); see `canSeeImages`.
    public let vision: VisionModels
    private let knownModels: Mutex<[ModelInfo]>
    /// The last complete listing and when it was made: model servers are asked at most once per
    /// `listLifetime` (the page, every message without a model and, with PARLEY_LISTED_MODELS_ONLY,
    /// every model check need the list).
    private let listing = Mutex<(models: [ModelInfo], at: ContinuousClock.Instant)?>(nil)
    /// Each provider's last non-empty listing, by its index in `providers`: a listing that fails
    /// (comes back empty) falls back to it, so one failed `GET /models` neither empties the model menu
    /// nor, with PARLEY_LISTED_MODELS_ONLY, closes every model.
    private let lastGood = Mutex<[Int: [ModelInfo]]>([:])
    /// How long a model listing is reused (by default).
    public static let modelListLifetime: Duration = .seconds(60)
    private let listLifetime: Duration

    public init(providers: [any ChatProvider], demo: DemoProvider = DemoProvider(), configuredModels: [ModelInfo] = [],
                modelListLifetime: Duration = ProviderRegistry.modelListLifetime, vision: VisionModels = VisionModels()) {
        self.providers = providers
        self.demo = demo
        self.vision = vision
        knownModels = Mutex(configuredModels)
        listLifetime = modelListLifetime
    }

    public convenience init(configuration: ProviderConfiguration, client: UpstreamClient,
                            vision: VisionModels = VisionModels()) {
        var providers: [any ChatProvider] = []
        var configured: [ModelInfo] = []
        if let openAI = configuration.openAI {
            let provider = OpenAICompatibleProvider(baseURL: openAI.baseURL, apiKey: openAI.apiKey, models: openAI.models,
                                                    supportsPrefill: openAI.supportsPrefill, client: client,
                                                    limits: configuration.limits, retry: configuration.retry)
            providers.append(provider)
            configured += openAI.models.map { ModelInfo(provider: "openai", model: $0, label: $0) }
        }
        if let anthropic = configuration.anthropic {
            providers.append(AnthropicProvider(baseURL: anthropic.baseURL, apiKey: anthropic.apiKey, models: anthropic.models,
                                               maxTokens: anthropic.maxTokens, client: client,
                                               limits: configuration.limits, retry: configuration.retry))
            configured += anthropic.models.map { ModelInfo(provider: "anthropic", model: $0, label: $0) }
        }
        self.init(providers: providers, demo: DemoProvider(tokensPerSecond: configuration.demoTokensPerSecond),
                  configuredModels: configured, vision: vision)
    }

    /// Every model of every provider (asked concurrently), or just the demo model when none is configured.
    /// A provider whose listing fails counts with its last good one (none before its first success).
    public func models() async -> [ModelInfo] {
        guard !providers.isEmpty else { return await demo.models() }
        if let cached = listing.withLock({ $0 }), ContinuousClock.now - cached.at < listLifetime {
            return cached.models
        }
        var lists = [[ModelInfo]](repeating: [], count: providers.count)
        await withTaskGroup(of: (Int, [ModelInfo]).self) { group in
            for (index, provider) in providers.enumerated() {
                group.addTask { (index, await provider.models()) }
            }
            for await (index, list) in group { lists[index] = list }
        }
        lists = lastGood.withLock { good in
            lists.enumerated().map { index, list in
                guard !list.isEmpty else { return good[index] ?? [] }
                good[index] = list
                return list
            }
        }
        let all = lists.flatMap { $0 }
        knownModels.withLock { known in
            for model in all where !known.contains(model) { known.append(model) }
        }
        // An empty listing (model server down) is not kept: the next call asks again.
        if !all.isEmpty {
            listing.withLock { $0 = (all, ContinuousClock.now) }
        }
        return all
    }

    /// The first listed model, or `demo` when there is none.
    public func defaultModelID() async -> String {
        await models().first?.id ?? DemoProvider.modelID
    }

    /// Whether the model of `modelID` (any accepted spelling: a bare name counts as the id of the
    /// provider listing it) is sent images, as `vision` says; false for an unknown model.
    public func canSeeImages(_ modelID: String) -> Bool {
        guard let resolved = resolve(modelID) else { return false }
        if resolved.provider is DemoProvider { return true }
        return vision.canSee(ModelID.make(provider: resolved.provider.name, model: resolved.model))
    }

    /// The provider and its own model name for a model id, or nil for an unknown id.
    public func resolve(_ modelID: String) -> (provider: any ChatProvider, model: String)? {
        if modelID == DemoProvider.modelID { return (demo, DemoProvider.modelID) }
        if let parts = ModelID.split(modelID), !parts.model.isEmpty,
           let provider = providers.first(where: { $0.name == parts.provider }) {
            return (provider, String(parts.model))
        }
        let matches = knownModels.withLock { $0.filter { $0.id == ModelID.make(provider: $0.provider, model: modelID) } }
        let owners = Set(matches.map(\.provider))
        guard owners.count == 1, let owner = owners.first,
              let provider = providers.first(where: { $0.name == owner }) else { return nil }
        return (provider, modelID)
    }
}
