import ParleySSE

/// A provider's stream parser on its own, fed decoded SSE events as an upstream call feeds it: for
/// `make bench` (parley-chunk-bench), which times each frame's parse without a network in between.
package struct ProviderStreamParser {
    /// The wire format.
    package enum Format: Sendable {
        case openAI, anthropic
    }

    /// How frames' JSON is read: as served (simdjson, JSONDecoder for what simdjson refuses), or
    /// JSONDecoder only, as before issue 23.
    package enum FrameDecoding: Sendable {
        case simdjson, jsonDecoder
    }

    private var parser: any EventStreamParser

    package init(_ format: Format, decoding: FrameDecoding = .simdjson) {
        let frames = decoding == .simdjson ? JSONFrameReader() : nil
        switch format {
        case .openAI: parser = OpenAIStreamParser(frames: frames)
        case .anthropic: parser = AnthropicStreamParser(frames: frames)
        }
    }

    /// The provider events of one SSE event (throws for an error event or a malformed frame).
    package mutating func consume(_ event: SSEEvent) throws(ProviderError) -> [ProviderEvent] {
        try parser.consume(event)
    }

    /// The closing events (usage, finish), or why the stream is incomplete.
    package func finish() throws(ProviderError) -> [ProviderEvent] {
        try parser.finish()
    }
}
