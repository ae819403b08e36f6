/// A built-in model that needs no LLM: streams a deterministic Markdown answer (heading, what it sees
/// of the user's files, quote of the user's text, lists, fenced code, GFM table, link) at a realistic
/// pace. For trying Parley out and for tests. Immutable and thread-safe; cancelling the consumer stops it at once.
public struct DemoProvider: ChatProvider {
    public static let modelID = "demo"
    public static let label = "Demo model (built-in, no LLM)"
    /// Default pace (30 tokens per second); 0 streams without delay.
    public static let defaultTokensPerSecond = 30.0

    public var name: String { "demo" }
    public var supportsPrefill: Bool { true }
    /// The demo never calls a tool: a request with tools is refused (`refusal(_: ChatRequest)` names `tools`).
    public var supportsTools: Bool { false }
    public let tokensPerSecond: Double

    public init(tokensPerSecond: Double = DemoProvider.defaultTokensPerSecond) {
        self.tokensPerSecond = max(0, tokensPerSecond)
    }

    public func models() async -> [ModelInfo] {
        [ModelInfo(id: Self.modelID, provider: name, label: Self.label)]
    }

    /// The demo's answer is fixed: it honours no option that asks a model for something (`tool_choice`
    /// and `parallel_tool_calls` included; `user`, metadata, is accepted and kept to Parley).
    public func refusal(_ options: ChatOptions) -> String? {
        options.demands.first
    }

    public func stream(_ request: ChatRequest) -> AsyncThrowingStream<ProviderEvent, Error> {
        let user = request.messages.last { $0.role == .user }
        let answer = Self.answer(to: user?.content ?? "", attachments: user?.attachments ?? [])
        // Continue: skip what the prefill already holds of the deterministic text.
        let skip = request.prefill.map { $0.count } ?? 0
        let remaining = String(answer.dropFirst(min(skip, answer.count)))
        let all = Self.tokens(remaining)
        // max_tokens cuts the answer as a model would: finish reason `length`.
        let tokens = request.maxTokens.map { Array(all.prefix(max(0, $0))) } ?? all
        let finish: FinishReason = tokens.count < all.count ? .length : .stop
        let interval: Duration? = tokensPerSecond > 0 ? .seconds(1.0 / tokensPerSecond) : nil
        let inputTokens = request.messages.reduce(0) { $0 + Self.tokens($1.textWithDocuments).count }
        return providerStream { continuation in
            for token in tokens {
                if let interval {
                    try await Task.sleep(for: interval)
                } else {
                    try Task.checkCancellation()
                }
                continuation.yield(.text(token))
            }
            continuation.yield(.usage(Usage(inputTokens: inputTokens, outputTokens: tokens.count)))
            continuation.yield(.finish(finish))
        }
    }

    /// The whole deterministic answer to a user message; its files, if any, are described first
    /// (`description(of:)`), the rest is the same.
    public static func answer(to userText: String, attachments: [ChatAttachment] = []) -> String {
        var quoted = userText.split(whereSeparator: \.isNewline).joined(separator: " ")
        if quoted.count > 200 { quoted = String(quoted.prefix(200)) + "…" }
        quoted = quoted.replacingOccurrences(of: "`", with: "'")
        if quoted.trimmingWhitespace.isEmpty { quoted = "(nothing)" }
        let words = quoted.split(separator: " ").count
        let files = description(of: attachments).map { $0 + "\n\n" } ?? ""
        return """
        ## Demo answer

        \(files)You wrote: `\(quoted)` (\(words) word\(words == 1 ? "" : "s")). This is the built-in demo model: \
        no language model is running, but the text streams like a real one so that you can try **Markdown** \
        rendering, *stopping* and continuing.

        What this answer shows:

        - a heading and a paragraph
        - a bulleted list and a numbered list
        - a fenced code block and a table

        Steps to connect a real model:

        1. Start an OpenAI-compatible server (llama.cpp, vLLM, Ollama).
        2. Set `PARLEY_OPENAI_BASE_URL` and restart Parley.
        3. Pick the model in the menu.

        ```swift
        let greeting = "Hello, Parley"
        print(greeting)
        ```

        | Provider | Variable |
        | --- | --- |
        | OpenAI-compatible | `PARLEY_OPENAI_BASE_URL` |
        | Anthropic | `PARLEY_ANTHROPIC_API_KEY` |

        Read more in the [CommonMark spec](https://spec.commonmark.org/).
        """
    }

    /// Short word pieces: each whitespace run stays with the word after it; long words are cut in four.
    static func tokens(_ text: String) -> [String] {
        var tokens: [String] = []
        var current = ""
        var inWord = false
        for character in text {
            if character.isWhitespace {
                if inWord {
                    tokens.append(current)
                    current = ""
                    inWord = false
                }
                current.append(character)
            } else {
                inWord = true
                current.append(character)
                if current.count >= 4, !current.allSatisfy(\.isWhitespace) {
                    tokens.append(current)
                    current = ""
                }
            }
        }
        if !current.isEmpty { tokens.append(current) }
        return tokens
    }
}

extension String {
    var trimmingWhitespace: Substring {
        var result = self[...]
        while let first = result.first, first.isWhitespace { result.removeFirst() }
        while let last = result.last, last.isWhitespace { result.removeLast() }
        return result
    }
}
