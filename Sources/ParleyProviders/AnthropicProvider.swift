import Foundation
import ParleyUpstream

/// Anthropic's Messages API (`POST {base}/v1/messages`, streaming). Immutable and thread-safe.
///
/// System messages become the top-level `system` field; a final assistant message is a native
/// prefill (its trailing whitespace is removed, as the API requires).
public struct AnthropicProvider: ChatProvider {
    /// Default `max_tokens` (required by the API) when the request names none.
    public static let defaultMaxTokens = 4096
    public static let apiVersion = "2023-06-01"

    public let name: String
    public var supportsPrefill: Bool { true }
    public var supportsTools: Bool { true }
    public let baseURL: String
    public let maxTokens: Int
    private let apiKey: String
    private let configuredModels: [String]
    private let limits: UpstreamLimits
    private let call: UpstreamCall

    public init(name: String = "anthropic", baseURL: String = "https://api.anthropic.com", apiKey: String,
                models: [String] = [], maxTokens: Int = AnthropicProvider.defaultMaxTokens, client: UpstreamClient,
                limits: UpstreamLimits = UpstreamLimits(), retry: RetryPolicy = RetryPolicy()) {
        self.name = name
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.apiKey = apiKey
        self.configuredModels = models
        self.maxTokens = maxTokens
        self.limits = limits
        self.call = UpstreamCall(client: client, retry: retry, secrets: [apiKey])
    }

    private var headers: [(String, String)] {
        [("x-api-key", apiKey), ("anthropic-version", Self.apiVersion)]
    }

    /// The configured models, or else `GET {base}/v1/models` (empty when it fails).
    public func models() async -> [ModelInfo] {
        if !configuredModels.isEmpty {
            return configuredModels.map { ModelInfo(provider: name, model: $0, label: $0) }
        }
        let request = limits.request(url: baseURL + "/v1/models", headers: headers + [("Accept", "application/json")])
        guard let body = try? await call.fetch(request),
              let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
              let data = object["data"] as? [[String: Any]] else { return [] }
        return data.compactMap { model in
            guard let id = jsonString(model["id"]) else { return nil }
            return ModelInfo(provider: name, model: id, label: jsonString(model["display_name"]) ?? id)
        }
    }

    public func stream(_ request: ChatRequest) -> AsyncThrowingStream<ProviderEvent, Error> {
        events(request).events
    }

    public func events(_ request: ChatRequest) -> ProviderEventBatches {
        let (body, trimmed) = Self.body(for: request, defaultMaxTokens: maxTokens)
        let upstream = limits.request(url: baseURL + "/v1/messages", method: "POST",
                                      headers: headers + [("Content-Type", "application/json"), ("Accept", "text/event-stream")],
                                      body: body)
        let call = self.call
        return ProviderEventBatches {
            UpstreamEventSource(call: call, request: upstream, parser: AnthropicStreamParser(prefillWasTrimmed: trimmed))
        }
    }

    /// The JSON body, and whether trailing whitespace was trimmed from the prefill.
    static func body(for request: ChatRequest, defaultMaxTokens: Int) -> (body: [UInt8], prefillTrimmed: Bool) {
        let system = request.messages.filter { $0.role == .system }.map(\.content).joined(separator: "\n\n")
        var messages = Self.messages(request.messages)
        var trimmed = false
        if let prefill = request.prefill {
            var kept = prefill
            while let last = kept.last, last.isWhitespace { kept.removeLast() }
            trimmed = kept.count != prefill.count
            if !kept.isEmpty { messages.append(ChatRequestBody.Message(role: "assistant", content: kept)) }
        }
        var body = ChatRequestBody(model: request.model, messages: messages)
        body.maxTokens = request.maxTokens ?? defaultMaxTokens
        if !system.isEmpty { body.system = system }
        // Anthropic takes temperature 0–1 (OpenAI's scale is 0–2): higher values are sent as 1.
        body.temperature = request.temperature.map { min($0, 1) }
        body.topP = request.topP
        body.stopSequences = request.options.stop?.sequences
        body.metadata = request.options.user.map(ChatRequestBody.Metadata.init)
        if !request.tools.isEmpty { body.tools = .anthropic(request.tools.map(ChatRequestBody.AnthropicTool.init)) }
        body.toolChoice = Self.toolChoice(request.options)
        return (body.bytes, trimmed)
    }

    /// The options sent in Anthropic's own words: `stop` as `stop_sequences`, `user` as
    /// `metadata.user_id`, `tool_choice` and `parallel_tool_calls` as `tool_choice` (see `toolChoice`).
    /// The Messages API (2023-06-01) has no seed, penalties, log probabilities or JSON response format
    /// (`json_object` or `json_schema`; no request field asks for either), so those are refused.
    static let honoured: Set<String> = ["stop", "tool_choice", "parallel_tool_calls"]

    public func refusal(_ options: ChatOptions) -> String? {
        options.demands.first { !Self.honoured.contains($0) }
    }
}
