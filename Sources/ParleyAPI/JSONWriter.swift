import ParleyHTTP
import ParleyGeneration

/// A minimal JSON writer for the event payloads: they are written per event for every subscriber,
/// so they avoid Foundation's encoders.
package struct JSONWriter {
    package private(set) var text = ""
    private var needsComma = false

    package init() {}

    package mutating func object(_ body: (inout JSONWriter) -> Void) {
        text += "{"
        needsComma = false
        body(&self)
        text += "}"
    }

    package mutating func field(_ name: String, _ value: String) {
        key(name)
        Self.appendString(value, to: &text)
    }

    package mutating func field(_ name: String, _ value: String?) {
        guard let value else { return rawField(name, "null") }
        field(name, value)
    }

    package mutating func field(_ name: String, _ value: Int) {
        rawField(name, String(value))
    }

    package mutating func field(_ name: String, _ values: [String]) {
        key(name)
        text += "["
        for (index, value) in values.enumerated() {
            if index > 0 { text += "," }
            Self.appendString(value, to: &text)
        }
        text += "]"
    }

    package mutating func field(_ name: String, _ patch: [BlockPatch]) {
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
    package mutating func rawField(_ name: String, _ json: String) {
        key(name)
        text += json
    }

    private mutating func key(_ name: String) {
        if needsComma { text += "," }
        needsComma = true
        Self.appendString(name, to: &text)
        text += ":"
    }

    /// Appends `value` as a JSON string literal (the one writer: `JSONString` in ParleyHTTP).
    package static func appendString(_ value: String, to out: inout String) {
        JSONString.append(value, to: &out)
    }
}
