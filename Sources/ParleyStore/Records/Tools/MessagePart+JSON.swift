import ParleyPrimitives

/// A reply's parts as JSON: the `parts` column and the API's `parts` field are this same form.
///
/// `{"type":"text","text","html"}`, `{"type":"reasoning","text"}`, `{"type":"tool_call","id","provider_id",
/// "tool","name","arguments_text","arguments","status","decision","result","round"}` with `result`
/// `{"content":[…],"structured_content"?,"is_error"}`; `{"type":"surface","surface_id","messages":[…]}`;
/// `{"type":"action","surface_id","action":{…}}`.
extension MessagePart {
    public var json: JSON {
        switch self {
        case .text(let text, let html):
            return .object(["type": .string("text"), "text": .string(text), "html": html.map(JSON.string) ?? .null])
        case .reasoning(let text):
            return .object(["type": .string("reasoning"), "text": .string(text)])
        case .toolCall(let call):
            return call.json
        case .surface(let surface):
            return .object(["type": .string("surface"), "surface_id": .string(surface.surfaceID),
                            "messages": .array(surface.messages)])
        case .action(let surfaceID, let action):
            return .object(["type": .string("action"), "surface_id": .string(surfaceID), "action": action])
        }
    }

    /// A part read back; nil for a value this version does not know (skipped, never a crash).
    public init?(json: JSON) {
        switch json["type"]?.stringValue {
        case "text":
            guard let text = json["text"]?.stringValue else { return nil }
            self = .text(text, html: json["html"]?.stringValue)
        case "reasoning":
            guard let text = json["text"]?.stringValue else { return nil }
            self = .reasoning(text)
        case "tool_call":
            guard let call = ToolCallPart(json: json) else { return nil }
            self = .toolCall(call)
        case "surface":
            guard let id = json["surface_id"]?.stringValue, let messages = json["messages"]?.arrayValue else { return nil }
            self = .surface(SurfacePart(surfaceID: id, messages: messages))
        case "action":
            guard let id = json["surface_id"]?.stringValue, let action = json["action"], action.objectValue != nil else {
                return nil
            }
            self = .action(surfaceID: id, action: action)
        default:
            return nil
        }
    }

    /// Parts as stored text (a JSON array).
    public static func storedText(_ parts: [MessagePart]) -> String {
        JSON.array(parts.map(\.json)).text
    }

    /// Parts from stored text; nil when the text is not a JSON array.
    public static func parts(storedText text: String) -> [MessagePart]? {
        guard let items = JSON(parsing: text)?.arrayValue else { return nil }
        return items.compactMap(MessagePart.init(json:))
    }
}

extension ToolCallPart {
    public var json: JSON {
        var fields: [String: JSON] = [
            "type": .string("tool_call"), "id": .string(id), "provider_id": .string(providerID),
            "tool": .string(tool), "name": .string(name), "arguments_text": .string(argumentsText),
            "arguments": arguments ?? .null, "status": .string(status.rawValue),
            "decision": decision.map { .string($0.rawValue) } ?? .null, "round": .integer(Int64(round)),
        ]
        fields["result"] = result?.json ?? .null
        return .object(fields)
    }

    init?(json: JSON) {
        guard let id = json["id"]?.stringValue, let tool = json["tool"]?.stringValue,
              let status = json["status"]?.stringValue.flatMap(ToolCallStatus.init(rawValue:)) else { return nil }
        let round: Int
        if case .integer(let value)? = json["round"] { round = Int(clamping: value) } else { round = 0 }
        self.init(id: id, providerID: json["provider_id"]?.stringValue ?? id, tool: tool,
                  name: json["name"]?.stringValue ?? "", argumentsText: json["arguments_text"]?.stringValue ?? "",
                  arguments: json["arguments"].flatMap { $0 == .null ? nil : $0 }, status: status,
                  decision: json["decision"]?.stringValue.flatMap(ToolDecision.init(rawValue:)),
                  result: json["result"].flatMap(ToolCallResult.init(json:)), round: round)
    }
}

extension ToolCallResult {
    public var json: JSON {
        var fields: [String: JSON] = ["content": .array(content), "is_error": .bool(isError)]
        if let structuredContent { fields["structured_content"] = structuredContent }
        return .object(fields)
    }

    init?(json: JSON) {
        guard let content = json["content"]?.arrayValue else { return nil }
        self.init(content: content, structuredContent: json["structured_content"],
                  isError: json["is_error"]?.boolValue ?? false)
    }
}
