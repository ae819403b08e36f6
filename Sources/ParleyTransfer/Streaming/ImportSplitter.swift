import Foundation
import ParleyAPI

/// Reads an import document piece by piece and takes the attachments' bytes out of it.
///
/// An export embeds each conversation's files as base64 (`files[].data`): up to 64 MiB of a document
/// whose other fields are the conversations' text. The splitter writes every other event back as
/// compact JSON text (what `ImportDocument` then decodes field by field, as before) and decodes each
/// `data` string into a file of its own in `directory`, leaving `"data": "@N"` (N: the index in
/// `files`) in its place. So only one attachment's string is ever in memory at a time, never the
/// document, and the text that remains is about the size of the conversations themselves.
///
/// `data` is recognised where the format puts it: `files[i].data` of a one-conversation document and
/// `conversations[j].files[i].data` of a document of all conversations. Anywhere else it is text.
final class ImportSplitter {
    /// Why the document cannot be split.
    enum Failure: Error, Equatable {
        /// `data` at `place` is not base64.
        case notBase64(place: String)
        /// The attachments' decoded bytes went past `maxFileBytes` in all.
        case filesTooLarge(Int)
    }

    /// The document without the attachments' bytes.
    private(set) var text: [UInt8] = []
    /// One decoded attachment per `"@N"`, in the document's order.
    private(set) var files: [URL] = []
    /// Decoded bytes of every attachment so far.
    private(set) var fileBytes = 0

    private let directory: URL
    private let maxFileBytes: Int
    /// Where each open container is: its kind, the current key (objects), the next index (arrays).
    private var stack: [Level] = []
    /// Whether the next value follows another in its container (a comma is due).
    private var needsComma = false

    private struct Level {
        var isObject: Bool
        var key: String?
        var index = 0
    }

    init(directory: URL, maxFileBytes: Int) {
        self.directory = directory
        self.maxFileBytes = maxFileBytes
    }

    /// Takes the next event of the document (`JSONEventParser`'s handler).
    func take(_ event: JSONEvent) throws {
        switch event {
        case .key(let key):
            if needsComma { text.append(UInt8(ascii: ",")) }
            append(string: key)
            text.append(UInt8(ascii: ":"))
            stack[stack.count - 1].key = key
            needsComma = false
            return
        case .endObject, .endArray:
            text.append(UInt8(ascii: event == .endObject ? "}" : "]"))
            stack.removeLast()
            endValue()
            return
        default:
            break
        }
        if needsComma { text.append(UInt8(ascii: ",")) }
        switch event {
        case .startObject, .startArray:
            let isObject = event == .startObject
            text.append(UInt8(ascii: isObject ? "{" : "["))
            stack.append(Level(isObject: isObject))
            needsComma = false
            return
        case .string(let value):
            if isAttachmentData {
                let index = try decode(value)
                append(string: "@\(index)")
            } else {
                append(string: value)
            }
        case .number(let raw): text += Array(raw.utf8)
        case .bool(let flag): text += Array((flag ? "true" : "false").utf8)
        case .null: text += Array("null".utf8)
        default: break
        }
        endValue()
    }

    /// A value ended: the next one in the same container needs a comma; an array counts it.
    private func endValue() {
        needsComma = true
        if let last = stack.indices.last, !stack[last].isObject { stack[last].index += 1 }
    }

    /// True for the string at `files[i].data` or `conversations[j].files[i].data`.
    private var isAttachmentData: Bool {
        let keys = stack.map { $0.isObject ? ($0.key ?? "") : "[]" }
        return keys == ["files", "[]", "data"] || keys == ["conversations", "[]", "files", "[]", "data"]
    }

    /// Where the current value is, as the import's errors name places (`conversations[0].files[1].data`).
    private var place: String {
        var text = ""
        for level in stack {
            if level.isObject {
                if let key = level.key { text += text.isEmpty ? key : ".\(key)" }
            } else {
                text += "[\(level.index)]"
            }
        }
        return text
    }

    private func decode(_ base64: String) throws -> Int {
        guard let data = Data(base64Encoded: base64) else { throw Failure.notBase64(place: place) }
        fileBytes += data.count
        guard fileBytes <= maxFileBytes else { throw Failure.filesTooLarge(maxFileBytes) }
        let url = directory.appendingPathComponent("import-\(files.count)")
        try data.write(to: url)
        files.append(url)
        return files.count - 1
    }

    private func append(string: String) {
        var escaped = ""
        JSONWriter.appendString(string, to: &escaped)
        text += Array(escaped.utf8)
    }
}
