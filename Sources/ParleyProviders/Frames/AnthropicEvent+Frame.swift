/// An `AnthropicEvent` read from simdjson's parse (`JSONFrameReader`) with the same rules as its
/// `Decodable` init.
extension AnthropicEvent {
    init?(frame: JSONFrameValue) {
        guard frame.isObject else { return nil }
        type = frame.string("type")
        index = frame.integer("index")
        messageUsage = frame.object("message")?.object("usage").map(Usage.init(frame:))
        contentBlock = frame.object("content_block").map(Part.init(frame:))
        delta = frame.object("delta").map(Part.init(frame:))
        usage = frame.object("usage").map(Usage.init(frame:))
        error = frame.object("error").map(ErrorBody.init(frame:))
    }
}

extension AnthropicEvent.Usage {
    init(frame: JSONFrameValue) {
        inputTokens = frame.integer("input_tokens")
        outputTokens = frame.integer("output_tokens")
    }
}

extension AnthropicEvent.Part {
    init(frame: JSONFrameValue) {
        type = frame.string("type")
        text = frame.text("text")
        thinking = frame.text("thinking")
        partialJSON = frame.text("partial_json")
        id = frame.text("id")
        name = frame.text("name")
        stopReason = frame.text("stop_reason")
    }
}

extension AnthropicEvent.ErrorBody {
    init(frame: JSONFrameValue) {
        type = frame.string("type")
        message = frame.string("message")
    }
}
