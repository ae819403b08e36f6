import ParleyPrimitives
import ParleyProviders

/// The tool-calling parameters of a `POST /v1/chat/completions` body (`tools`, `tool_choice`,
/// `parallel_tool_calls`), read into typed values and checked as OpenAI checks them: each failure a
/// 400 naming the parameter as OpenAI's `param` does (`tools[2].function.name`). The tools are offered
/// to the model as client tools (relayed, never run); the choices travel in `ChatOptions`.
enum OpenAIChatTools {
    /// `tools`: at most this many functions (OpenAI's limit).
    static let maxTools = 128
    /// A function name: 1 to 64 of these (OpenAI's and Anthropic's `^[a-zA-Z0-9_-]{1,64}$`).
    static let maxNameLength = 64

    /// The parameters of a function declared without `parameters`: none.
    static let noParameters = JSON.object(["type": .string("object"), "properties": .object([:])])

    static func isValidName(_ name: String) -> Bool {
        (1...maxNameLength).contains(name.utf8.count) && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"): true
            default: false
            }
        }
    }

    /// `tools`: `[{"type":"function","function":{"name","description"?,"parameters"?}}]`, names unique.
    static func tools(_ value: JSON?) throws(OpenAIError) -> [ToolSpec] {
        guard let value, value != .null else { return [] }
        guard let items = value.arrayValue else {
            throw OpenAIError.invalid("'tools' must be an array of function tools.", param: "tools")
        }
        guard items.count <= maxTools else {
            throw OpenAIError.invalid("'tools' holds at most \(maxTools) functions.", param: "tools")
        }
        var specs: [ToolSpec] = []
        var names: Set<String> = []
        for (index, item) in items.enumerated() {
            let at = "tools[\(index)]"
            guard item["type"] == .string("function") else {
                throw OpenAIError.invalid("'\(at).type' must be 'function'.", param: "\(at).type")
            }
            guard let function = item["function"]?.objectValue else {
                throw OpenAIError.invalid("'\(at).function' must be an object.", param: "\(at).function")
            }
            guard let name = function["name"]?.stringValue, isValidName(name) else {
                throw OpenAIError.invalid("'\(at).function.name' must be 1 to \(maxNameLength) letters, digits, "
                                          + "'_' or '-' (^[a-zA-Z0-9_-]{1,64}$).", param: "\(at).function.name")
            }
            guard names.insert(name).inserted else {
                throw OpenAIError.invalid("'tools' names the function '\(name)' twice.", param: "\(at).function.name")
            }
            var description = ""
            switch function["description"] {
            case nil, .null?: break
            case .string(let text)?: description = text
            default:
                throw OpenAIError.invalid("'\(at).function.description' must be a string.",
                                          param: "\(at).function.description")
            }
            var parameters = noParameters
            switch function["parameters"] {
            case nil, .null?: break
            case .object(let schema)?: parameters = .object(schema)
            default:
                throw OpenAIError.invalid("'\(at).function.parameters' must be a JSON Schema object.",
                                          param: "\(at).function.parameters")
            }
            specs.append(ToolSpec(name: name, description: description, parameters: parameters))
        }
        return specs
    }

    /// `tool_choice`: `"auto"`, `"none"`, `"required"` or `{"type":"function","function":{"name"}}`
    /// naming one of `tools`; only with tools, as OpenAI requires.
    static func toolChoice(_ value: JSON?, tools: [ToolSpec]) throws(OpenAIError) -> ChatOptions.ToolChoice? {
        guard let value, value != .null else { return nil }
        let choice: ChatOptions.ToolChoice
        switch value {
        case .string("auto"): choice = .auto
        case .string("none"): choice = .none
        case .string("required"): choice = .required
        case .object(let fields) where fields["type"] == .string("function")
            && fields["function"]?["name"]?.stringValue != nil:
            let name = fields["function"]?["name"]?.stringValue ?? ""
            guard tools.contains(where: { $0.name == name }) else {
                throw OpenAIError.invalid("'tool_choice' names the function '\(name)', which 'tools' does not declare.",
                                          param: "tool_choice")
            }
            choice = .function(name)
        default:
            throw OpenAIError.invalid("'tool_choice' must be 'auto', 'none', 'required' or "
                                      + "{\"type\":\"function\",\"function\":{\"name\":…}}.", param: "tool_choice")
        }
        guard !tools.isEmpty else {
            throw OpenAIError.invalid("'tool_choice' is only allowed when 'tools' are specified.", param: "tool_choice")
        }
        return choice
    }

    /// `parallel_tool_calls`: true or false; only with tools, as OpenAI requires (no provider is sent
    /// a choice about calls it cannot make).
    static func parallelToolCalls(_ value: JSON?, tools: [ToolSpec]) throws(OpenAIError) -> Bool? {
        guard let value, value != .null else { return nil }
        guard let flag = value.boolValue else {
            throw OpenAIError.invalid("'parallel_tool_calls' must be true or false.", param: "parallel_tool_calls")
        }
        guard !tools.isEmpty else {
            throw OpenAIError.invalid("'parallel_tool_calls' is only allowed when 'tools' are specified.",
                                      param: "parallel_tool_calls")
        }
        return flag
    }
}
