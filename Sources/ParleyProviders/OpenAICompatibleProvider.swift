import Foundation
import ParleyUpstream

/// A server speaking OpenAI Chat Completions (`POST {base}/chat/completions`, streaming): OpenAI,
/// llama.cpp, vLLM, Ollama, llama-cpp-python... Immutable and thread-safe.
///
/// Continue (prefill) sends the partial answer as a final assistant message, which llama.cpp and
/// vLLM continue; `supportsPrefill` says whether this server is trusted to do so.
public struct OpenAICompatibleProvider: ChatProvider {
    public let name: String
    public let supportsPrefill: Bool
    public var supportsTools: Bool { true }
    public let baseURL: String
    private let apiKey: String?
    private let configuredModels: [String]
    private let limits: UpstreamLimits
    private let call: UpstreamCall

    public init(name: String = "openai", baseURL: String, apiKey: String? = nil, models: [String] = [],
                supportsPrefill: Bool = false, client: UpstreamClient,
                limits: UpstreamLimits = UpstreamLimits(), retry: RetryPolicy = RetryPolicy()) {
        self.name = name
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.apiKey = apiKey.flatMap { $0.isEmpty ? nil : $0 }
        self.configuredModels = models
        self.supportsPrefill = supportsPrefill
        self.limits = limits
        self.call = UpstreamCall(client: client, retry: retry, secrets: self.apiKey.map { [$0] } ?? [])
    }

    private var authorization: [(String, String)] {
        apiKey.map { [("Authorization", "Bearer \($0)")] } ?? []
    }

    /// The configured models, or else the server's `GET {base}/models` (empty when it fails).
    public func models() async -> [ModelInfo] {
        var names = configuredModels
        if names.isEmpty {
            let request = limits.request(url: baseURL + "/models", headers: authorization + [("Accept", "application/json")])
            if let body = try? await call.fetch(request),
               let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
               let data = object["data"] as? [[String: Any]] {
                names = data.compactMap { jsonString($0["id"]) }
            }
        }
        return names.map { ModelInfo(provider: name, model: $0, label: $0) }
    }

    public func stream(_ request: ChatRequest) -> AsyncThrowingStream<ProviderEvent, Error> {
        events(request).events
    }

    public func events(_ request: ChatRequest) -> ProviderEventBatches {
        let upstream = limits.request(url: baseURL + "/chat/completions", method: "POST",
                                      headers: authorization + [("Content-Type", "application/json"), ("Accept", "text/event-stream")],
                                      body: Self.body(for: request))
        let call = self.call
        return ProviderEventBatches { UpstreamEventSource(call: call, request: upstream, parser: OpenAIStreamParser()) }
    }

    static func body(for request: ChatRequest) -> [UInt8] {
        var messages = request.messages.map(message)
        if let prefill = request.prefill, !prefill.isEmpty {
            messages.append(ChatRequestBody.Message(role: "assistant", content: prefill))
        }
        var body = ChatRequestBody(model: request.model, messages: messages)
        body.streamOptions = ChatRequestBody.StreamOptions(includeUsage: true)
        body.maxTokens = request.maxTokens
        body.temperature = request.temperature
        body.topP = request.topP
        let options = request.options
        body.stop = options.stop.map(ChatRequestBody.Stop.init)
        body.seed = options.seed
        body.presencePenalty = options.presencePenalty
        body.frequencyPenalty = options.frequencyPenalty
        body.logprobs = options.logprobs
        body.topLogprobs = options.topLogprobs
        body.user = options.user
        body.responseFormatJSON = options.responseFormat?.json
        if !request.tools.isEmpty { body.tools = .openAI(request.tools.map(ChatRequestBody.OpenAITool.init)) }
        body.toolChoice = options.toolChoice?.openAIJSON
        body.parallelToolCalls = options.parallelToolCalls
        return body.bytes
    }

    /// OpenAI's form of a message: an assistant turn's calls as `tool_calls` (its content null when it
    /// has no text), a tool's result as `role: tool` naming the call, a turn with attachments as
    /// `ChatRequestBody.openAIContent` makes it.
    private static func message(_ message: ChatMessage) -> ChatRequestBody.Message {
        switch message.role {
        case .assistant where !message.toolCalls.isEmpty:
            ChatRequestBody.Message(role: "assistant", content: message.content.isEmpty ? .null : .text(message.content),
                                    toolCalls: message.toolCalls.map(ChatRequestBody.ToolCall.init))
        case .tool:
            ChatRequestBody.Message(role: "tool", content: .text(message.content), toolCallID: message.toolCallID ?? "")
        case .system, .user, .assistant:
            ChatRequestBody.Message(role: message.role.rawValue, content: ChatRequestBody.openAIContent(message))
        }
    }

    /// Every option is sent on as given (`tool_choice`, `parallel_tool_calls`, `logprobs` and
    /// `top_logprobs` too): the stream's log probabilities come back as `ProviderEvent.logprobs`.
    public func refusal(_ options: ChatOptions) -> String? {
        nil
    }
}
