import ParleyPrimitives
import ParleyStore

/// The cap on one tool result (`PARLEY_MAX_TOOL_RESULT_BYTES`), and how a result reads to the model.
///
/// A result over the cap keeps its content items in order while they fit; the text item that crosses
/// the cap is cut on a character boundary, later items are dropped, and a last text item says so in
/// words the model reads. Structured content that does not fit is dropped the same way.
struct ToolResultLimit: Sendable {
    let maxBytes: Int

    /// The result, cut to `maxBytes` of content (text bytes, or a non-text item's JSON bytes).
    func cut(_ result: ToolCallResult) -> ToolCallResult {
        var left = maxBytes
        var kept: [JSON] = []
        var total = 0
        var cut = false
        for item in result.content {
            let size = Self.size(of: item)
            total += size
            guard !cut else { continue }
            if size <= left {
                kept.append(item)
                left -= size
            } else {
                if let text = item["text"]?.stringValue, item["type"]?.stringValue == "text" {
                    kept.append(.object(["type": .string("text"), "text": .string(String(text.prefix(utf8Bytes: left)))]))
                }
                left = 0
                cut = true
            }
        }
        var structured = result.structuredContent
        if let value = structured {
            let size = value.text.utf8.count
            total += size
            if cut || size > left {
                structured = nil
                cut = true
            }
        }
        guard cut else { return result }
        kept.append(.object(["type": .string("text"), "text": .string(
            "\n[Parley cut this tool result at \(maxBytes) bytes; it had \(total).]")]))
        return ToolCallResult(content: kept, structuredContent: structured, isError: result.isError)
    }

    private static func size(of item: JSON) -> Int {
        if item["type"]?.stringValue == "text", let text = item["text"]?.stringValue { return text.utf8.count }
        return item.text.utf8.count
    }

    /// The result as the text a model receives: the text items joined; the structured content's JSON
    /// when there is no text; an image or audio item named by its type, never its data.
    static func modelText(_ result: ToolCallResult) -> String {
        var pieces: [String] = []
        for item in result.content {
            switch item["type"]?.stringValue {
            case "text":
                if let text = item["text"]?.stringValue { pieces.append(text) }
            case "image", "audio":
                pieces.append("[\(item["type"]?.stringValue ?? "media"): \(item["mimeType"]?.stringValue ?? "unknown type")]")
            case "resource_link":
                pieces.append("[resource: \(item["uri"]?.stringValue ?? "")]")
            case "resource":
                let resource = item["resource"]
                pieces.append(resource?["text"]?.stringValue ?? "[resource: \(resource?["uri"]?.stringValue ?? "")]")
            default:
                pieces.append(item.text)
            }
        }
        if let structured = result.structuredContent, pieces.allSatisfy({ $0.isEmpty }) {
            pieces = [structured.text]
        }
        return pieces.joined(separator: "\n")
    }
}
