import Foundation

/// The JSON body of a streaming chat request, for both provider dialects: encoded with `JSONEncoder`
/// from a typed value (fields in a fixed order, absent ones left out) rather than through
/// `JSONSerialization` and `[String: Any]`, which cost 4% of a reply's start.
struct ChatRequestBody: Encodable {
    struct Message: Encodable {
        let role: String
        let content: String
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
    }

    init(model: String, messages: [Message]) {
        self.model = model
        self.messages = messages
    }

    private static let encoder = JSONEncoder()

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
