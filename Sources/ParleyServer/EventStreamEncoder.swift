import Foundation
import ParleyGeneration

/// Turns generation events into the bytes of a `text/event-stream`, in one of the two modes the
/// stream endpoint offers: `html` (snapshot, block, tail, error, done: for the page) and `text`
/// (snapshot, delta, error, done: raw source text for API clients). Each event carries its `id:` so
/// EventSource resumes with Last-Event-ID.
struct EventStreamEncoder: Sendable {
    enum Mode: Sendable {
        case html
        case text
    }

    let mode: Mode

    /// The SSE frames for `events`; empty when none of them belongs to this mode.
    func encode(_ events: [GenerationEvent]) -> [UInt8] {
        var out: [UInt8] = []
        for event in events {
            guard let (name, data) = payload(event.payload) else { continue }
            out.append(contentsOf: "id: \(event.id)\nevent: \(name)\ndata: ".utf8)
            out.append(contentsOf: data.utf8)
            out.append(contentsOf: "\n\n".utf8)
        }
        return out
    }

    private func payload(_ payload: GenerationEvent.Payload) -> (String, String)? {
        var json = JSONWriter()
        switch payload {
        case .snapshot(let snapshot):
            json.object {
                $0.field("message_id", snapshot.messageID)
                $0.field("status", snapshot.status.rawValue)
                $0.field("blocks", snapshot.blocks)
                $0.field("tail", snapshot.tail)
                $0.field("content", snapshot.content)
                $0.field("content_length", snapshot.content.utf8.count)
            }
            return ("snapshot", json.text)
        case .block(let index, let html):
            guard mode == .html else { return nil }
            json.object {
                $0.field("index", index)
                $0.field("html", html)
            }
            return ("block", json.text)
        case .tail(let text):
            guard mode == .html else { return nil }
            json.object { $0.field("text", text) }
            return ("tail", json.text)
        case .delta(let text):
            guard mode == .text else { return nil }
            json.object { $0.field("text", text) }
            return ("delta", json.text)
        case .error(let code, let message):
            json.object {
                $0.field("code", code)
                $0.field("message", message)
            }
            return ("error", json.text)
        case .done(let outcome):
            json.object {
                $0.field("status", outcome.status.rawValue)
                $0.field("finish_reason", outcome.finishReason)
                $0.rawField("usage", outcome.usage ?? "null")
                $0.field("patch", outcome.patch)
                $0.field("blocks", outcome.blockCount)
            }
            return ("done", json.text)
        }
    }
}

/// A minimal JSON writer for the event payloads: they are written per event for every subscriber,
/// so they avoid Foundation's encoders.
struct JSONWriter {
    private(set) var text = ""
    private var needsComma = false

    mutating func object(_ body: (inout JSONWriter) -> Void) {
        text += "{"
        needsComma = false
        body(&self)
        text += "}"
    }

    mutating func field(_ name: String, _ value: String) {
        key(name)
        Self.appendString(value, to: &text)
    }

    mutating func field(_ name: String, _ value: String?) {
        guard let value else { return rawField(name, "null") }
        field(name, value)
    }

    mutating func field(_ name: String, _ value: Int) {
        rawField(name, String(value))
    }

    mutating func field(_ name: String, _ values: [String]) {
        key(name)
        text += "["
        for (index, value) in values.enumerated() {
            if index > 0 { text += "," }
            Self.appendString(value, to: &text)
        }
        text += "]"
    }

    mutating func field(_ name: String, _ patch: [BlockPatch]) {
        key(name)
        text += "["
        for (index, item) in patch.enumerated() {
            if index > 0 { text += "," }
            text += "{\"index\":\(item.index),\"html\":"
            Self.appendString(item.html, to: &text)
            text += "}"
        }
        text += "]"
    }

    /// A field whose value is already JSON text.
    mutating func rawField(_ name: String, _ json: String) {
        key(name)
        text += json
    }

    private mutating func key(_ name: String) {
        if needsComma { text += "," }
        needsComma = true
        Self.appendString(name, to: &text)
        text += ":"
    }

    /// Appends `value` as a JSON string literal (RFC 8259 escaping; U+2028/2029 escaped for JS).
    static func appendString(_ value: String, to out: inout String) {
        out += "\""
        var run = value.unicodeScalars.startIndex
        let scalars = value.unicodeScalars
        var index = run
        while index != scalars.endIndex {
            let scalar = scalars[index]
            let escape: String? = switch scalar {
            case "\"": "\\\""
            case "\\": "\\\\"
            case "\n": "\\n"
            case "\r": "\\r"
            case "\t": "\\t"
            case "\u{2028}": "\\u2028"
            case "\u{2029}": "\\u2029"
            default: scalar.value < 0x20 ? String(format: "\\u%04x", scalar.value) : nil
            }
            if let escape {
                out.unicodeScalars.append(contentsOf: scalars[run..<index])
                out += escape
                run = scalars.index(after: index)
            }
            index = scalars.index(after: index)
        }
        out.unicodeScalars.append(contentsOf: scalars[run..<scalars.endIndex])
        out += "\""
    }
}
