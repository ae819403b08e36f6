/// Which model servers Parley talks to, read from environment variables. A value type; build once.
///
/// - `PARLEY_OPENAI_BASE_URL` (enables the OpenAI-compatible provider), `PARLEY_OPENAI_API_KEY`,
///   `PARLEY_OPENAI_MODELS` (comma list; else `GET {base}/models`), `PARLEY_OPENAI_PREFILL` (1/true: the
///   server continues a final assistant message)
/// - `PARLEY_ANTHROPIC_API_KEY` (enables Anthropic), `PARLEY_ANTHROPIC_BASE_URL` (default
///   https://api.anthropic.com), `PARLEY_ANTHROPIC_MODELS`, `PARLEY_ANTHROPIC_MAX_TOKENS` (default 4096)
/// - `PARLEY_DEMO_TOKENS_PER_SECOND` (default 30)
/// - `PARLEY_UPSTREAM_CONNECT_TIMEOUT`, `PARLEY_UPSTREAM_IDLE_TIMEOUT` (seconds, default 10 and 60),
///   `PARLEY_UPSTREAM_MAX_BYTES` (default 64 MiB)
public struct ProviderConfiguration: Sendable, Equatable {
    public struct OpenAI: Sendable, Equatable {
        public var baseURL: String
        public var apiKey: String?
        public var models: [String]
        public var supportsPrefill: Bool

        public init(baseURL: String, apiKey: String? = nil, models: [String] = [], supportsPrefill: Bool = false) {
            self.baseURL = baseURL
            self.apiKey = apiKey
            self.models = models
            self.supportsPrefill = supportsPrefill
        }
    }

    public struct Anthropic: Sendable, Equatable {
        public var baseURL: String
        public var apiKey: String
        public var models: [String]
        public var maxTokens: Int

        public init(baseURL: String = "https://api.anthropic.com", apiKey: String, models: [String] = [],
                    maxTokens: Int = AnthropicProvider.defaultMaxTokens) {
            self.baseURL = baseURL
            self.apiKey = apiKey
            self.models = models
            self.maxTokens = maxTokens
        }
    }

    public var openAI: OpenAI?
    public var anthropic: Anthropic?
    public var demoTokensPerSecond: Double
    public var limits: UpstreamLimits
    public var retry: RetryPolicy

    public init(openAI: OpenAI? = nil, anthropic: Anthropic? = nil,
                demoTokensPerSecond: Double = DemoProvider.defaultTokensPerSecond,
                limits: UpstreamLimits = UpstreamLimits(), retry: RetryPolicy = RetryPolicy()) {
        self.openAI = openAI
        self.anthropic = anthropic
        self.demoTokensPerSecond = demoTokensPerSecond
        self.limits = limits
        self.retry = retry
    }

    /// Reads the `PARLEY_*` variables. Throws for a malformed number (never echoing secrets).
    public init(environment: [String: String]) throws(ProviderConfigurationError) {
        func value(_ name: String) -> String? {
            guard let raw = environment[name]?.trimmingWhitespace, !raw.isEmpty else { return nil }
            return String(raw)
        }
        func list(_ name: String) -> [String] {
            (value(name) ?? "").split(separator: ",").map { String($0.description.trimmingWhitespace) }.filter { !$0.isEmpty }
        }
        func number(_ name: String, minimum: Double) throws(ProviderConfigurationError) -> Double? {
            guard let text = value(name) else { return nil }
            guard let number = Double(text), number.isFinite, number >= minimum else {
                throw .invalidValue(name: name, value: text)
            }
            return number
        }
        self.init()
        if let base = value("PARLEY_OPENAI_BASE_URL") {
            let prefill = value("PARLEY_OPENAI_PREFILL").map { ["1", "true", "yes"].contains($0.lowercased()) } ?? false
            openAI = OpenAI(baseURL: base, apiKey: value("PARLEY_OPENAI_API_KEY"), models: list("PARLEY_OPENAI_MODELS"),
                            supportsPrefill: prefill)
        }
        if let key = value("PARLEY_ANTHROPIC_API_KEY") {
            var anthropic = Anthropic(apiKey: key, models: list("PARLEY_ANTHROPIC_MODELS"))
            if let base = value("PARLEY_ANTHROPIC_BASE_URL") { anthropic.baseURL = base }
            if let maxTokens = try number("PARLEY_ANTHROPIC_MAX_TOKENS", minimum: 1) { anthropic.maxTokens = Int(maxTokens) }
            self.anthropic = anthropic
        }
        if let pace = try number("PARLEY_DEMO_TOKENS_PER_SECOND", minimum: 0) { demoTokensPerSecond = pace }
        if let seconds = try number("PARLEY_UPSTREAM_CONNECT_TIMEOUT", minimum: 0.001) { limits.connectTimeout = .seconds(seconds) }
        if let seconds = try number("PARLEY_UPSTREAM_IDLE_TIMEOUT", minimum: 0.001) { limits.idleTimeout = .seconds(seconds) }
        if let bytes = try number("PARLEY_UPSTREAM_MAX_BYTES", minimum: 1) { limits.maxResponseBytes = Int(bytes) }
    }
}

/// A `PARLEY_*` variable that could not be used.
public enum ProviderConfigurationError: Error, Sendable, Equatable {
    case invalidValue(name: String, value: String)
}
