import Foundation
import ParleyPrimitives

/// The JSON body of a streaming chat request, for both provider dialects: encoded with `JSONEncoder`
/// from a typed value (keys sorted, so a tool's schema is written the same way every time; absent
/// fields left out) rather than through `JSONSerialization` and `[String: Any]`, which cost 4% of a
/// reply's start. The tool-calling pieces of each dialect are in `ChatRequestBody+Tools.swift`.
struct ChatRequestBody: Encodable {
    /// One message. `content` is text, null (an OpenAI assistant turn that only calls tools),
    /// Anthropic content blocks or OpenAI content parts (a turn with images); `tool_calls` and
    /// `tool_call_id` are OpenAI's.
    struct Message: Encodable {
        enum Content: Encodable {
            case text(String)
            case null
            case blocks([Block])
            case parts([OpenAIPart])

            func encode(to encoder: Encoder) throws {
                var container = encoder.singleValueContainer()
                switch self {
                case .text(let text): try container.encode(text)
                case .null: try container.encodeNil()
                case .blocks(let blocks): try container.encode(blocks)
                case .parts(let parts): try container.encode(parts)
                }
            }
        }

        let role: String
        let content: Content
        var toolCalls: [ToolCall]?
        var toolCallID: String?

        private enum CodingKeys: String, CodingKey {
            case role, content
            case toolCalls = "tool_calls"
            case toolCallID = "tool_call_id"
        }

        init(role: String, content: String) {
            self.init(role: role, content: .text(content))
        }

        init(role: String, content: Content, toolCalls: [ToolCall]? = nil, toolCallID: String? = nil) {
            self.role = role
            self.content = content
            self.toolCalls = toolCalls
            self.toolCallID = toolCallID
        }
    }

    struct StreamOptions: Encodable {
        let includeUsage: Bool

        private enum CodingKeys: String, CodingKey {
            case includeUsage = "include_usage"
        }
    }

    /// Anthropic's `metadata` (`user_id`).
    struct Metadata: Encodable {
        let userID: String

        private enum CodingKeys: String, CodingKey {
            case userID = "user_id"
        }
    }

    /// OpenAI's `stop` in the form the client sent it: a string or an array.
    struct Stop: Encodable {
        let value: ChatOptions.Stop

        func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            switch value {
            case .one(let text): try container.encode(text)
            case .many(let texts): try container.encode(texts)
            }
        }
    }

    let model: String
    var system: String?
    let messages: [Message]
    var maxTokens: Int?
    let stream = true
    var streamOptions: StreamOptions?
    var temperature: Double?
    var topP: Double?
    var stop: Stop?
    var stopSequences: [String]?
    var seed: Int?
    var presencePenalty: Double?
    var frequencyPenalty: Double?
    var logprobs: Bool?
    var topLogprobs: Int?
    var user: String?
    var metadata: Metadata?
    var tools: Tools?
    /// `tool_choice` in the dialect's JSON form.
    var toolChoice: JSON?
    var parallelToolCalls: Bool?
    /// `response_format`'s JSON (the client's value, re-encoded by JSONSerialization), appended as the last field (JSONEncoder cannot
    /// carry raw JSON, and re-encoding a schema would reorder its keys).
    var responseFormatJSON: String?

    private enum CodingKeys: String, CodingKey {
        case model, system, messages, stream, temperature, stop, seed, logprobs, user, metadata
        case maxTokens = "max_tokens"
        case streamOptions = "stream_options"
        case topP = "top_p"
        case stopSequences = "stop_sequences"
        case presencePenalty = "presence_penalty"
        case frequencyPenalty = "frequency_penalty"
        case topLogprobs = "top_logprobs"
        case tools
        case toolChoice = "tool_choice"
        case parallelToolCalls = "parallel_tool_calls"
    }

    init(model: String, messages: [Message]) {
        self.model = model
        self.messages = messages
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The encoded body (empty only if encoding failed, which a value of these types cannot).
    var bytes: [UInt8] {
        var bytes = Array((try? Self.encoder.encode(self)) ?? Data())
        if let responseFormatJSON, bytes.last == UInt8(ascii: "}") {
            bytes.removeLast()
            bytes += Array(",\"response_format\":\(responseFormatJSON)}".utf8)
        }
        return bytes
    }
}
