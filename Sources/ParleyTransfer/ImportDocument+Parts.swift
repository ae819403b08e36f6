import ParleyA2UI
import ParleyMarkdown
import ParleyPrimitives
import ParleyStore
import ParleyHTTP

/// The parts of an imported message: known kinds only, on the right role, with the same bounds as parts
/// Parley makes (a surface's A2UI messages are checked as `parley/render_ui` checks them).
extension ImportDocument {
    /// A reply's parts from the file: each must be a part this version knows; text parts are rendered
    /// again; calls left open (`streaming`, `running`) are `cancelled`, since nothing will finish them.
    static func parts(_ items: [JSON], role: Role, at place: String,
                      renderer: MarkdownRenderer) throws(HTTPError) -> [MessagePart] {
        var parts: [MessagePart] = []
        for (index, item) in items.enumerated() {
            guard let part = MessagePart(json: item) else {
                throw invalid("\(place)[\(index)]: not a text, reasoning, tool_call, surface or action part.")
            }
            // A user turn's parts are its text and a surface's action; every other part is a reply's.
            let userPart: Bool
            switch part {
            case .text, .action: userPart = true
            default: userPart = false
            }
            guard role == .user ? userPart : role == .assistant && !isAction(part) else {
                throw invalid("\(place)[\(index)]: a \(role.rawValue) message has no such part.")
            }
            if let surface = part.surface {
                // Stored surfaces are what pages render: an imported one is held to what render_ui accepts.
                for (position, message) in surface.messages.enumerated() {
                    do {
                        try SurfaceBoard.check(message, images: .trusted)
                    } catch {
                        throw invalid("\(place)[\(index)].messages[\(position)]: \(error.message)")
                    }
                }
            }
            if let call = part.toolCall, let fault = Self.fault(of: call) {
                throw invalid("\(place)[\(index)].\(fault)")
            }
            switch part {
            case .text(let text, _): parts.append(.text(text, html: renderer.render(text)))
            case .toolCall(var call) where call.status == .streaming || call.status == .running:
                call.status = .cancelled
                parts.append(.toolCall(call))
            default: parts.append(part)
            }
        }
        return parts
    }

    private static func isAction(_ part: MessagePart) -> Bool {
        if case .action = part { return true }
        return false
    }

    /// What a call from a file has that no call Parley made could have, so the API would serve a part
    /// outside its documented shape: `arguments` other than an object, a result content item other than
    /// an object with a string `type`, `structured_content` other than an object. Nil when it is sound.
    private static func fault(of call: ToolCallPart) -> String? {
        if let arguments = call.arguments, arguments.objectValue == nil {
            return "arguments: must be a JSON object or null"
        }
        guard let result = call.result else { return nil }
        if let bad = result.content.firstIndex(where: { $0.objectValue == nil || $0["type"]?.stringValue == nil }) {
            return "result.content[\(bad)]: must be an object with a string 'type'"
        }
        if let structured = result.structuredContent, structured.objectValue == nil {
            return "result.structured_content: must be a JSON object, or absent"
        }
        return nil
    }
}
