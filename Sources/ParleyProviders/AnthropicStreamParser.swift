import Foundation
import ParleySSE

/// Parses an Anthropic Messages stream: `message_start`, content blocks (text, thinking, tool use),
/// `message_delta` (stop reason, output usage), `message_stop`. `ping` and unknown event types are
/// ignored; an `error` event throws `upstream_error`. `.usage` and `.finish` are emitted last. Text is
/// read by simdjson, else JSONDecoder, both keeping every character (see `JSONFrameReader`).
struct AnthropicStreamParser: EventStreamParser {
    private(set) var isComplete = false
    private var stopReason: FinishReason?
    private var usage = Usage()
    /// Set when trailing whitespace was removed from the prefill: the continuation's leading
    /// whitespace is then dropped, since the kept partial answer already ends with some.
    private var trimLeadingWhitespace: Bool

    /// simdjson for the frames it parses, JSONDecoder for the rest; nil: JSONDecoder for every frame.
    private let frames: JSONFrameReader?

    init(prefillWasTrimmed: Bool = false, frames: JSONFrameReader? = JSONFrameReader()) {
        trimLeadingWhitespace = prefillWasTrimmed
        self.frames = frames
    }

    mutating func consume(_ event: SSEEvent) throws(ProviderError) -> [ProviderEvent] {
        guard let parsed = frames?.read(event.data, AnthropicEvent.init(frame:))
            ?? LenientDecoding.decode(AnthropicEvent.self, from: event.data) else {
            if event.type == "ping" { return [] }
            throw ProviderError(code: .upstreamProtocol, message: "the model server sent a malformed JSON frame")
        }
        switch parsed.type ?? event.type {
        case "message_start":
            if let start = parsed.messageUsage {
                usage.inputTokens = start.inputTokens ?? usage.inputTokens
                usage.outputTokens = start.outputTokens ?? usage.outputTokens
            }
            return []
        case "content_block_start":
            guard let block = parsed.contentBlock else { return [] }
            switch block.type {
            case "text": return text(block.text)
            case "thinking": return block.thinking.map { [.reasoning($0)] } ?? []
            case "tool_use":
                return [.toolCall(ToolCallDelta(index: parsed.index ?? 0, id: block.id, name: block.name))]
            default: return []
            }
        case "content_block_delta":
            guard let delta = parsed.delta else { return [] }
            switch delta.type {
            case "text_delta": return text(delta.text)
            case "thinking_delta": return delta.thinking.map { [.reasoning($0)] } ?? []
            case "input_json_delta":
                guard let json = delta.partialJSON else { return [] }
                return [.toolCall(ToolCallDelta(index: parsed.index ?? 0, argumentsDelta: json))]
            default: return []
            }
        case "message_delta":
            if let reason = parsed.delta?.stopReason {
                stopReason = Self.finishReason(reason)
            }
            if let delta = parsed.usage {
                usage.outputTokens = delta.outputTokens ?? usage.outputTokens
                usage.inputTokens = delta.inputTokens ?? usage.inputTokens
            }
            return []
        case "message_stop":
            isComplete = true
            return []
        case "error":
            let message = parsed.error?.message ?? "unknown error"
            let kind = parsed.error?.type.map { " (\($0))" } ?? ""
            throw ProviderError(code: .upstreamError, message: "the model server reported an error\(kind): \(message)")
        default:
            return []  // ping, content_block_stop and future event types
        }
    }

    private mutating func text(_ text: String?) -> [ProviderEvent] {
        guard var text else { return [] }
        if trimLeadingWhitespace {
            text = String(text.drop(while: \.isWhitespace))
            if text.isEmpty { return [] }
            trimLeadingWhitespace = false
        }
        return [.text(text)]
    }

    func finish() throws(ProviderError) -> [ProviderEvent] {
        guard isComplete || stopReason != nil else {
            throw ProviderError(code: .upstreamTruncated,
                                message: "the stream ended without a finish reason (no message_stop from the model server)")
        }
        let usageEvents: [ProviderEvent] = usage == Usage() ? [] : [.usage(usage)]
        return usageEvents + [.finish(stopReason ?? .other("unknown"))]
    }

    static func finishReason(_ reason: String) -> FinishReason {
        switch reason {
        case "end_turn", "stop_sequence": .stop
        case "max_tokens": .length
        case "tool_use": .toolCalls
        case "refusal": .contentFilter
        default: .other(reason)
        }
    }
}
