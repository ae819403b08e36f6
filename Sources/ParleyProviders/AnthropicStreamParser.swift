import Foundation
import ParleySSE

/// Parses an Anthropic Messages stream: `message_start`, content blocks (text, thinking, tool use),
/// `message_delta` (stop reason, output usage), `message_stop`. `ping` and unknown event types are
/// ignored; an `error` event throws `upstream_error`. `.usage` and `.finish` are emitted last.
struct AnthropicStreamParser: EventStreamParser {
    private(set) var isComplete = false
    private var stopReason: FinishReason?
    private var usage = Usage()
    /// Set when trailing whitespace was removed from the prefill: the continuation's leading
    /// whitespace is then dropped, since the kept partial answer already ends with some.
    private var trimLeadingWhitespace: Bool

    init(prefillWasTrimmed: Bool = false) {
        trimLeadingWhitespace = prefillWasTrimmed
    }

    mutating func consume(_ event: SSEEvent) throws(ProviderError) -> [ProviderEvent] {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(event.data.utf8))) as? [String: Any] else {
            if event.type == "ping" { return [] }
            throw ProviderError(code: "upstream_protocol", message: "the model server sent a malformed JSON frame")
        }
        let type = (object["type"] as? String) ?? event.type
        switch type {
        case "message_start":
            let message = object["message"] as? [String: Any]
            if let start = message?["usage"] as? [String: Any] {
                usage.inputTokens = jsonInt(start["input_tokens"]) ?? usage.inputTokens
                usage.outputTokens = jsonInt(start["output_tokens"]) ?? usage.outputTokens
            }
            return []
        case "content_block_start":
            let index = jsonInt(object["index"]) ?? 0
            guard let block = object["content_block"] as? [String: Any] else { return [] }
            switch block["type"] as? String {
            case "text": return text(jsonString(block["text"]))
            case "thinking": return jsonString(block["thinking"]).map { [.reasoning($0)] } ?? []
            case "tool_use":
                return [.toolCall(ToolCallDelta(index: index, id: jsonString(block["id"]), name: jsonString(block["name"])))]
            default: return []
            }
        case "content_block_delta":
            let index = jsonInt(object["index"]) ?? 0
            guard let delta = object["delta"] as? [String: Any] else { return [] }
            switch delta["type"] as? String {
            case "text_delta": return text(jsonString(delta["text"]))
            case "thinking_delta": return jsonString(delta["thinking"]).map { [.reasoning($0)] } ?? []
            case "input_json_delta":
                guard let json = jsonString(delta["partial_json"]) else { return [] }
                return [.toolCall(ToolCallDelta(index: index, argumentsDelta: json))]
            default: return []
            }
        case "message_delta":
            if let delta = object["delta"] as? [String: Any], let reason = jsonString(delta["stop_reason"]) {
                stopReason = Self.finishReason(reason)
            }
            if let delta = object["usage"] as? [String: Any] {
                usage.outputTokens = jsonInt(delta["output_tokens"]) ?? usage.outputTokens
                usage.inputTokens = jsonInt(delta["input_tokens"]) ?? usage.inputTokens
            }
            return []
        case "message_stop":
            isComplete = true
            return []
        case "error":
            let error = object["error"] as? [String: Any]
            let message = (error?["message"] as? String) ?? "unknown error"
            let kind = (error?["type"] as? String).map { " (\($0))" } ?? ""
            throw ProviderError(code: "upstream_error", message: "the model server reported an error\(kind): \(message)")
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
            throw ProviderError(code: "upstream_truncated",
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
