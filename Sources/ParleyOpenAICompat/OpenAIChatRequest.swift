import Foundation
import ParleyAPI
import ParleyHTTP
import ParleyPrimitives
import ParleyProviders
import ParleyStore

/// A `POST /v1/chat/completions` body as Parley uses it. Read with `JSONDecoder` (every character kept,
/// as `JSONBody` does). `stop`, `seed`, the penalties, `logprobs`, `user` and `response_format` are
/// read by `OpenAIChatOptions`; `tools`, `tool_choice` and `parallel_tool_calls` by `OpenAIChatTools`;
/// other unknown keys are ignored.
///
/// How the messages map onto a conversation: every `system` (or `developer`) message, in order,
/// joined by a blank line, is the system prompt; the other messages, consecutive ones of the same
/// role joined by a blank line, must alternate user and assistant and end with a user turn. That last
/// user turn is the one sent; the turns before it are the stored history (see `OpenAIHandlers`).
///
/// Tool calls: an assistant message's `tool_calls` belong to its turn, and the `role: tool` messages
/// after it are that turn's `toolResults` (each naming one of its calls, every call answered before
/// the next user or assistant message). An assistant message after tool results starts a new turn
/// (the model's answer once it has the results). A request may also end with tool results: the model
/// is then to go on from them (`continuesAfterToolResults`, `content` empty).
struct OpenAIChatRequest {
    /// One user or assistant turn.
    struct Turn: Equatable {
        let role: Role
        var content: String
        /// An assistant turn's tool calls, in order.
        var toolCalls: [ChatToolCall] = []
        /// The results the request gives for them (`role: tool` messages), in the request's order.
        var toolResults: [ToolResult] = []
        /// A user turn's images and files (content parts), in order.
        var files: [OpenAIFilePart] = []

        /// True when every call has its result.
        var isAnswered: Bool { toolResults.count == toolCalls.count }
    }

    /// A `role: tool` message: the result of the call `toolCallID`.
    struct ToolResult: Equatable {
        let toolCallID: String
        let content: String
    }

    let model: String
    /// nil when the request has no system message.
    let systemPrompt: String?
    /// The turns before the last user turn, alternating user and assistant from a user turn.
    let history: [Turn]
    /// The last user turn's text: the message this call sends.
    let content: String
    /// The last user turn's images and files.
    let files: [OpenAIFilePart]
    let stream: Bool
    /// `stream_options.include_usage`: a final chunk with the usage and no choices.
    let includeUsage: Bool
    /// `temperature`, `top_p`, `max_tokens` (or `max_completion_tokens`) for this call.
    let settings: GenerationSettings
    /// The options passed on to the provider (`stop`, `seed`, `tool_choice`, …), if it can honour them.
    let options: ChatOptions
    /// `tools`: the functions the model may call.
    let tools: [ToolSpec]
    /// The request ends with tool results rather than a user message: the model goes on from them.
    let continuesAfterToolResults: Bool

    /// True when the messages hold tool calls or their results (a provider that calls no tools cannot read them).
    var hasToolTurns: Bool {
        continuesAfterToolResults || history.contains { !$0.toolCalls.isEmpty }
    }

    /// Parses and checks the body; each failure is a 400 naming the field (`param` in OpenAI's shape).
    init(_ request: HTTPRequest, fields: SettingsFields) throws(OpenAIError) {
        try self.init(body: request.body, fields: fields)
    }

    init(body bytes: [UInt8], fields: SettingsFields) throws(OpenAIError) {
        let body: Body
        do {
            // Read in place, not from a copy: the body may hold megabytes of base64 (images, files).
            body = try bytes.withUnsafeBytes { buffer in
                let data = buffer.baseAddress.map {
                    Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: $0), count: buffer.count, deallocator: .none)
                }
                return try JSONDecoder().decode(Body.self, from: data ?? Data())
            }
        } catch let error as FieldError {
            throw OpenAIError(status: 400, message: error.message, kind: .invalidRequest, param: error.field,
                              code: error.code)
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
            if message.role != "tool", let last = turns.last, !last.isAnswered {
                throw OpenAIError.invalid("An assistant message with 'tool_calls' must be followed by a 'tool' message "
                                          + "for each of its calls.", param: "messages")
            }
            switch message.role {
            case "system", "developer":
                system.append(message.content)
            case "user", "assistant":
                let role: Role = message.role == "user" ? .user : .assistant
                if let last = turns.last, last.role == role, last.toolCalls.isEmpty {
                    // A message of only tool calls or files adds no text (and no blank line).
                    if !message.content.isEmpty {
                        let separator = last.content.isEmpty ? "" : "\n\n"
                        turns[turns.count - 1].content += separator + message.content
                    }
                    turns[turns.count - 1].toolCalls = message.toolCalls
                    turns[turns.count - 1].files += message.files
                } else {
                    turns.append(Turn(role: role, content: message.content, toolCalls: message.toolCalls,
                                      files: message.files))
                }
            case "tool":
                let id = message.toolCallID ?? ""
                guard let last = turns.last, last.toolCalls.contains(where: { $0.id == id }),
                      !last.toolResults.contains(where: { $0.toolCallID == id }) else {
                    throw OpenAIError.invalid("A 'tool' message must answer a call of the assistant message before it "
                                              + "('tool_call_id' naming one of its 'tool_calls', once).", param: "messages")
                }
                turns[turns.count - 1].toolResults.append(ToolResult(toolCallID: id, content: message.content))
            default:
                throw OpenAIError.invalid("Message role '\(message.role)' is not supported: use system, developer, "
                                          + "user, assistant or tool.", param: "messages")
            }
        }
        guard let last = turns.last, last.role == .user || !last.toolResults.isEmpty else {
            throw OpenAIError.invalid("The last message (after system messages) must be a user message "
                                      + "(or the results of the assistant's tool calls).", param: "messages")
        }
        guard turns[0].role == .user else {
            throw OpenAIError.invalid("The first message after the system messages must be a user message.",
                                      param: "messages")
        }
        guard last.role != .user || !last.content.isEmpty || !last.files.isEmpty else {
            throw OpenAIError.invalid("The last user message must not be empty.", param: "messages")
        }
        model = body.model
        systemPrompt = system.isEmpty ? nil : system.joined(separator: "\n\n")
        continuesAfterToolResults = last.role == .assistant
        history = continuesAfterToolResults ? turns : Array(turns.dropLast())
        content = continuesAfterToolResults ? "" : last.content
        files = continuesAfterToolResults ? [] : last.files
        stream = body.stream ?? false
        includeUsage = body.streamOptions?.includeUsage ?? false
        settings = GenerationSettings(
            temperature: try Self.checked(body.temperature, "temperature", fields.temperature),
            topP: try Self.checked(body.topP, "top_p", fields.topP),
            maxTokens: try Self.checked(body.maxTokens ?? body.maxCompletionTokens, "max_tokens", fields.maxTokens))
        tools = try OpenAIChatTools.tools(body.tools)
        var options = try OpenAIChatOptions.options(body.options, body: bytes)
        options.toolChoice = try OpenAIChatTools.toolChoice(body.toolChoice, tools: tools)
        options.parallelToolCalls = try OpenAIChatTools.parallelToolCalls(body.parallelToolCalls, tools: tools)
        self.options = options
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

    /// A field of the wrong type or shape, named (`code`: OpenAI's error code).
    struct FieldError: Error {
        let field: String
        let message: String
        var code = "invalid_request"
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
        let tools: JSON?
        let toolChoice: JSON?
        let parallelToolCalls: JSON?
        /// The rest of the options (`OpenAIChatOptions`), decoded in the same pass.
        let options: OpenAIChatOptions.Fields

        enum CodingKeys: String, CodingKey {
            case model, messages, stream, temperature, n, tools
            case toolChoice = "tool_choice"
            case parallelToolCalls = "parallel_tool_calls"
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
            tools = try container.decodeIfPresent(JSON.self, forKey: .tools)
            toolChoice = try container.decodeIfPresent(JSON.self, forKey: .toolChoice)
            parallelToolCalls = try container.decodeIfPresent(JSON.self, forKey: .parallelToolCalls)
            options = try OpenAIChatOptions.Fields(from: decoder)
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

    /// A message: `content` is a string, or an array of parts (`OpenAIContentPart`: the text parts joined;
    /// image and file parts in a user message only), or null in an assistant message with `tool_calls`;
    /// a `tool` message names its call (`tool_call_id`).
    private struct Message: Decodable {
        let role: String
        let content: String
        let files: [OpenAIFilePart]
        let toolCalls: [ChatToolCall]
        let toolCallID: String?

        enum CodingKeys: String, CodingKey {
            case role, content
            case toolCalls = "tool_calls"
            case toolCallID = "tool_call_id"
        }

        /// One of `tool_calls`: `{"id","type":"function","function":{"name","arguments"}}`.
        private struct ToolCall: Decodable {
            struct Function: Decodable {
                let name: String
                let arguments: String
            }

            let id: String
            let type: String
            let function: Function
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard let role = try? container.decode(String.self, forKey: .role) else {
                throw FieldError(field: "messages", message: "Every message needs a 'role' string.")
            }
            self.role = role
            var calls: [ToolCall] = []
            if role == "assistant", container.contains(.toolCalls), try !container.decodeNil(forKey: .toolCalls) {
                guard let decoded = try? container.decode([ToolCall].self, forKey: .toolCalls),
                      decoded.allSatisfy({ $0.type == "function" && !$0.id.isEmpty && !$0.function.name.isEmpty }),
                      Set(decoded.map(\.id)).count == decoded.count else {
                    throw FieldError(field: "messages", message: "An assistant message's 'tool_calls' must be "
                                     + "{\"id\",\"type\":\"function\",\"function\":{\"name\",\"arguments\"}} items "
                                     + "with distinct ids.")
                }
                calls = decoded
            }
            toolCalls = calls.map { ChatToolCall(id: $0.id, name: $0.function.name, arguments: $0.function.arguments) }
            toolCallID = role == "tool" ? try? container.decode(String.self, forKey: .toolCallID) : nil
            if role == "tool", toolCallID == nil {
                throw FieldError(field: "messages", message: "A 'tool' message needs a 'tool_call_id' string.")
            }
            var files: [OpenAIFilePart] = []
            if !calls.isEmpty, (try? container.decodeNil(forKey: .content)) ?? true {
                content = ""
            } else if let text = try? container.decode(String.self, forKey: .content) {
                content = text
            } else {
                let parts: [OpenAIContentPart]
                do {
                    parts = try container.decode([OpenAIContentPart].self, forKey: .content)
                } catch let error as FieldError {
                    throw error
                } catch {
                    throw FieldError(field: "messages", message: "Every message's 'content' must be a string or an "
                                     + "array of content parts (text; image_url and file in user messages).")
                }
                guard role == "user" || parts.allSatisfy({ $0.file == nil }) else {
                    throw FieldError(field: "messages", message: "Only user messages may carry images and files.")
                }
                content = parts.compactMap(\.text).joined()
                files = parts.compactMap(\.file)
            }
            self.files = files
        }
    }
}
