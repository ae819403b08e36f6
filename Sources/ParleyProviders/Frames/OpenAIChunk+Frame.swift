/// An `OpenAIChunk` read from simdjson's parse (`JSONFrameReader`) with the same rules as its
/// `Decodable` init. A chunk carrying log probabilities gives nil: its raw `[JSON]` items are left to
/// `JSONDecoder`, which decides how each number reads (they come only when a client asks for them).
extension OpenAIChunk {
    init?(frame: JSONFrameValue) {
        guard frame.isObject else { return nil }
        error = UpstreamErrorField(frame: frame.field("error"))
        usage = frame.object("usage").map(Usage.init(frame:))
        guard let items = frame.objects("choices") else {
            choices = nil
            return
        }
        var choices: [Choice] = []
        choices.reserveCapacity(items.count)
        for item in items {
            if let logprobs = item.object("logprobs"), logprobs.has("content") { return nil }
            choices.append(Choice(frame: item))
        }
        self.choices = choices
    }
}

extension OpenAIChunk.Usage {
    init(frame: JSONFrameValue) {
        promptTokens = frame.integer("prompt_tokens")
        completionTokens = frame.integer("completion_tokens")
    }
}

extension OpenAIChunk.Choice {
    /// A choice without log probabilities (see `OpenAIChunk.init?(frame:)`).
    init(frame: JSONFrameValue) {
        index = frame.integer("index")
        delta = frame.object("delta").map(OpenAIChunk.Delta.init(frame:))
        finishReason = frame.text("finish_reason")
    }
}

extension OpenAIChunk.Delta {
    init(frame: JSONFrameValue) {
        reasoning = frame.text("reasoning_content") ?? frame.text("reasoning")
        content = frame.text("content")
        toolCalls = frame.objects("tool_calls")?.map(OpenAIChunk.ToolCall.init(frame:))
    }
}

extension OpenAIChunk.ToolCall {
    init(frame: JSONFrameValue) {
        index = frame.integer("index")
        id = frame.text("id")
        let function = frame.object("function")
        name = function?.text("name")
        arguments = function?.string("arguments")
    }
}

extension UpstreamErrorField {
    /// nil for an absent or null field, like `lenient(UpstreamErrorField.self, key)`.
    init?(frame value: JSONFrameValue?) {
        guard let value, !value.isNull else { return nil }
        message = value.string ?? (value.isObject ? value.string("message") : nil) ?? "unknown error"
    }
}
