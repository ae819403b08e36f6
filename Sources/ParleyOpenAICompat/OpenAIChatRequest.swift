import Foundation
import ParleyAPI
import ParleyHTTP
import ParleyProviders
import ParleyStore

/// A `POST /v1/chat/completions` body as Parley uses it. Read with `JSONDecoder` (every character kept,
/// as `JSONBody` does). `stop`, `seed`, the penalties, `logprobs`, `user` and `response_format` are
/// read by `OpenAIChatOptions`; the tool-calling parameters are refused; other unknown keys are ignored.
///
/// How the messages map onto a conversation: every `system` (or `developer`) message, in order,
/// joined by a blank line, is the system prompt; the other messages, consecutive ones of the same
/// role joined by a blank line, must alternate user and assistant and end with a user turn. That last
/// user turn is the one sent; the turns before it are the stored history (see `OpenAIHandlers`).
struct OpenAIChatRequest {
    /// One user or assistant turn.
    struct Turn: Equatable {
        let role: Role
        var content: String
    }

    let model: String
    /// nil when the request has no system message.
    let systemPrompt: String?
    /// The turns before the last user turn, alternating user and assistant from a user turn.
    let history: [Turn]
    /// The last user turn's text: the message this call sends.
    let content: String
    let stream: Bool
    /// `stream_options.include_usage`: a final chunk with the usage and no choices.
    let includeUsage: Bool
    /// `temperature`, `top_p`, `max_tokens` (or `max_completion_tokens`) for this call.
    let settings: GenerationSettings
    /// The options passed on to the provider (`stop`, `seed`, …), if it can honour them.
    let options: ChatOptions

    /// Parses and checks the body; each failure is a 400 naming the field (`param` in OpenAI's shape).
    init(_ request: HTTPRequest, fields: SettingsFields) throws(OpenAIError) {
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: Data(request.body))
        } catch let error as FieldError {
            throw OpenAIError.invalid(error.message, param: error.field)
        } catch {
            throw OpenAIError.invalid("The request body is not a JSON object of a chat completion request.", param: nil)
        }
        guard !body.model.isEmpty else { throw OpenAIError.invalid("'model' must not be empty.", param: "model") }
        if let n = body.n, n != 1 {
            throw OpenAIError.invalid("Parley gives one choice per call: 'n' must be 1.", param: "n")
        }
        guard !body.messages.isEmpty else {
            throw OpenAIError.invalid("'messages' must hold at least one message.", param: "messages")
        }
        var system: [String] = []
        var turns: [Turn] = []
        for message in body.messages {
            switch message.role {
            case "system", "developer":
                system.append(message.content)
            case "user", "assistant":
                let role: Role = message.role == "user" ? .user : .assistant
                if let last = turns.last, last.role == role {
                    turns[turns.count - 1].content += "\n\n" + message.content
                } else {
                    turns.append(Turn(role: role, content: message.content))
                }
            default:
                throw OpenAIError.invalid("Message role '\(message.role)' is not supported: use system, developer, "
                                          + "user or assistant.", param: "messages")
            }
        }
        guard let last = turns.last, last.role == .user else {
            throw OpenAIError.invalid("The last message (after system messages) must be a user message.",
                                      param: "messages")
        }
        guard turns[0].role == .user else {
            throw OpenAIError.invalid("The first message after the system messages must be a user message.",
                                      param: "messages")
        }
        guard !last.content.isEmpty else {
            throw OpenAIError.invalid("The last user message must not be empty.", param: "messages")
        }
        model = body.model
        systemPrompt = system.isEmpty ? nil : system.joined(separator: "\n\n")
        history = Array(turns.dropLast())
        content = last.content
        stream = body.stream ?? false
        includeUsage = body.streamOptions?.includeUsage ?? false
        settings = GenerationSettings(
            temperature: try Self.checked(body.temperature, "temperature", fields.temperature),
            topP: try Self.checked(body.topP, "top_p", fields.topP),
            maxTokens: try Self.checked(body.maxTokens ?? body.maxCompletionTokens, "max_tokens", fields.maxTokens))
        options = try OpenAIChatOptions.parse(request.body)
    }

    /// `value` through the conversation settings' range check, its failure named as `param`.
    private static func checked<T>(_ value: T?, _ param: String,
                                   _ check: (T) throws(HTTPError) -> T) throws(OpenAIError) -> T? {
        guard let value else { return nil }
        do {
            return try check(value)
        } catch {
            throw OpenAIError.invalid(error.message, param: param)
        }
    }

    // MARK: - Decoding

    /// A field of the wrong type or shape, named.
    struct FieldError: Error {
        let field: String
        let message: String
    }

    private struct Body: Decodable {
        let model: String
        let messages: [Message]
        let stream: Bool?
        let streamOptions: StreamOptions?
        let temperature: Double?
        let topP: Double?
        let maxTokens: Int?
        let maxCompletionTokens: Int?
        let n: Int?

        enum CodingKeys: String, CodingKey {
            case model, messages, stream, temperature, n
            case streamOptions = "stream_options"
            case topP = "top_p"
            case maxTokens = "max_tokens"
            case maxCompletionTokens = "max_completion_tokens"
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard container.contains(.model) else { throw FieldError(field: "model", message: "'model' is required.") }
            model = try Self.field(container, .model, "a string")
            guard container.contains(.messages) else {
                throw FieldError(field: "messages", message: "'messages' is required.")
            }
            messages = try Self.field(container, .messages, "an array of messages with a role and text content")
            stream = try Self.optional(container, .stream, "true or false")
            streamOptions = try Self.optional(container, .streamOptions, "an object")
            temperature = try Self.optional(container, .temperature, "a number")
            topP = try Self.optional(container, .topP, "a number")
            maxTokens = try Self.optional(container, .maxTokens, "an integer")
            maxCompletionTokens = try Self.optional(container, .maxCompletionTokens, "an integer")
            n = try Self.optional(container, .n, "an integer")
        }

        private static func field<T: Decodable>(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys,
                                                _ expected: String) throws -> T {
            do {
                return try container.decode(T.self, forKey: key)
            } catch let error as FieldError {
                throw error
            } catch {
                throw FieldError(field: key.rawValue, message: "'\(key.rawValue)' must be \(expected).")
            }
        }

        private static func optional<T: Decodable>(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys,
                                                   _ expected: String) throws -> T? {
            guard container.contains(key), try !container.decodeNil(forKey: key) else { return nil }
            return try field(container, key, expected) as T
        }
    }

    private struct StreamOptions: Decodable {
        let includeUsage: Bool?

        enum CodingKeys: String, CodingKey {
            case includeUsage = "include_usage"
        }
    }

    /// A message: `content` is a string, or an array of `{"type":"text","text":…}` parts (joined).
    private struct Message: Decodable {
        let role: String
        let content: String

        enum CodingKeys: String, CodingKey {
            case role, content
        }

        private struct Part: Decodable {
            let type: String
            let text: String?
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard let role = try? container.decode(String.self, forKey: .role) else {
                throw FieldError(field: "messages", message: "Every message needs a 'role' string.")
            }
            self.role = role
            if let text = try? container.decode(String.self, forKey: .content) {
                content = text
            } else if let parts = try? container.decode([Part].self, forKey: .content) {
                guard parts.allSatisfy({ $0.type == "text" && $0.text != nil }) else {
                    throw FieldError(field: "messages", message: "Only text content parts are supported.")
                }
                content = parts.compactMap(\.text).joined()
            } else {
                throw FieldError(field: "messages",
                                 message: "Every message's 'content' must be text (a string or text parts).")
            }
        }
    }
}
