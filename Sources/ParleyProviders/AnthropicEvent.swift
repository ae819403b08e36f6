/// One event of an Anthropic Messages stream, as far as Parley reads it. Decoded with `JSONDecoder`
/// so text keeps every character (see `LenientDecoding`); every field is optional and a field of an
/// unexpected type reads as absent.
struct AnthropicEvent: Decodable {
    var type: String?
    var index: Int?
    /// `message_start`'s usage.
    var messageUsage: Usage?
    var contentBlock: Part?
    var delta: Part?
    /// `message_delta`'s usage.
    var usage: Usage?
    var error: ErrorBody?

    struct Usage: Decodable {
        var inputTokens: Int?
        var outputTokens: Int?

        private enum CodingKeys: String, CodingKey {
            case inputTokens = "input_tokens"
            case outputTokens = "output_tokens"
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            inputTokens = container.integer(.inputTokens)
            outputTokens = container.integer(.outputTokens)
        }
    }

    /// A `content_block` or a `delta`: both carry a type and the fields of that type.
    struct Part: Decodable {
        var type: String?
        var text: String?
        var thinking: String?
        var partialJSON: String?
        var id: String?
        var name: String?
        var stopReason: String?

        private enum CodingKeys: String, CodingKey {
            case type, text, thinking, id, name
            case partialJSON = "partial_json"
            case stopReason = "stop_reason"
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = container.lenient(String.self, .type)
            text = container.text(.text)
            thinking = container.text(.thinking)
            partialJSON = container.text(.partialJSON)
            id = container.text(.id)
            name = container.text(.name)
            stopReason = container.text(.stopReason)
        }
    }

    struct ErrorBody: Decodable {
        var type: String?
        var message: String?

        private enum CodingKeys: String, CodingKey {
            case type, message
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = container.lenient(String.self, .type)
            message = container.lenient(String.self, .message)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case type, index, message, usage, error, delta
        case contentBlock = "content_block"
    }

    private enum MessageKeys: String, CodingKey {
        case usage
    }

    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = container.lenient(String.self, .type)
        index = container.integer(.index)
        let message = try? container.nestedContainer(keyedBy: MessageKeys.self, forKey: .message)
        messageUsage = message?.lenient(Usage.self, .usage)
        contentBlock = container.lenient(Part.self, .contentBlock)
        delta = container.lenient(Part.self, .delta)
        usage = container.lenient(Usage.self, .usage)
        error = container.lenient(ErrorBody.self, .error)
    }
}
