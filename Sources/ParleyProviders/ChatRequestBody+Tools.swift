import ParleyPrimitives

/// Tool calling in each dialect's request body: the tool list, an assistant turn's calls and the
/// results sent back. Typed values, encoded by the body's `JSONEncoder`; schemas and Anthropic's
/// `input` are `JSON` values embedded as they are.
extension ChatRequestBody {
    /// `tools`: OpenAI's `{"type":"function","function":{…}}` items or Anthropic's `{"name","input_schema"}`.
    enum Tools: Encodable {
        case openAI([OpenAITool])
        case anthropic([AnthropicTool])

        func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .openAI(let tools): try container.encode(tools)
            case .anthropic(let tools): try container.encode(tools)
            }
        }
    }

    struct OpenAITool: Encodable {
        struct Function: Encodable {
            let name: String
            /// Left out when empty.
            let description: String?
            let parameters: JSON
        }

        let type = "function"
        let function: Function

        init(_ spec: ToolSpec) {
            function = Function(name: spec.name, description: spec.description.isEmpty ? nil : spec.description,
                                parameters: spec.parameters)
        }
    }

    struct AnthropicTool: Encodable {
        let name: String
        let description: String?
        let inputSchema: JSON

        private enum CodingKeys: String, CodingKey {
            case name, description
            case inputSchema = "input_schema"
        }

        init(_ spec: ToolSpec) {
            name = spec.name
            description = spec.description.isEmpty ? nil : spec.description
            inputSchema = spec.parameters
        }
    }

    /// One of an OpenAI assistant message's `tool_calls`: the arguments go back as the model wrote
    /// them, JSON or not (OpenAI takes any string).
    struct ToolCall: Encodable {
        struct Function: Encodable {
            let name: String
            let arguments: String
        }

        let id: String
        let type = "function"
        let function: Function

        init(_ call: ChatToolCall) {
            id = call.id
            function = Function(name: call.name, arguments: call.arguments)
        }
    }

    /// An Anthropic content block: text, an image (`ChatRequestBody+Attachments`), a tool call
    /// (`tool_use`) or a tool's result (`tool_result`).
    enum Block: Encodable {
        case text(String)
        case image(ImageSource)
        case toolUse(id: String, name: String, input: JSON)
        case toolResult(toolUseID: String, content: String, isError: Bool)

        private enum CodingKeys: String, CodingKey {
            case type, text, id, name, input, content, source
            case toolUseID = "tool_use_id"
            case isError = "is_error"
        }

        /// A model's call: `input` must be an object, so arguments that are not a JSON object are sent
        /// as `{}` (the caller sends the parse error back as the call's result).
        static func toolUse(_ call: ChatToolCall) -> Block {
            let input = JSON(parsing: call.arguments).flatMap { $0.objectValue == nil ? nil : $0 } ?? .object([:])
            return .toolUse(id: call.id, name: call.name, input: input)
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .text(let text):
                try container.encode("text", forKey: .type)
                try container.encode(text, forKey: .text)
            case .image(let source):
                try container.encode("image", forKey: .type)
                try container.encode(source, forKey: .source)
            case .toolUse(let id, let name, let input):
                try container.encode("tool_use", forKey: .type)
                try container.encode(id, forKey: .id)
                try container.encode(name, forKey: .name)
                try container.encode(input, forKey: .input)
            case .toolResult(let id, let content, let isError):
                try container.encode("tool_result", forKey: .type)
                try container.encode(id, forKey: .toolUseID)
                try container.encode(content, forKey: .content)
                try container.encode(isError, forKey: .isError)
            }
        }
    }
}
