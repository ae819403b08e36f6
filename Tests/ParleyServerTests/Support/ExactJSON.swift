import Foundation
import ParleySSE

/// JSON read and written without JSONSerialization, for tests about exact text: on Linux
/// `JSONSerialization` drops a U+FEFF at the start of a string value, so a test reading answers
/// with it could never see that bug (or could invent one). `JSONDecoder` keeps every character.
enum ExactJSON: Decodable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    case array([ExactJSON])
    case object([String: ExactJSON])

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([ExactJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: ExactJSON].self))
        }
    }

    /// Parses `text`; nil when it is not JSON.
    static func parse(_ text: String) -> ExactJSON? {
        try? JSONDecoder().decode(ExactJSON.self, from: Data(text.utf8))
    }

    static func parse(_ bytes: [UInt8]) -> ExactJSON? {
        try? JSONDecoder().decode(ExactJSON.self, from: Data(bytes))
    }

    subscript(key: String) -> ExactJSON? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }

    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    var array: [ExactJSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    var isNull: Bool { self == .null }

    /// The value as JSONSerialization would give it (String, Double or Int, Bool, NSNull, arrays,
    /// dictionaries), every character kept.
    var foundation: Any {
        switch self {
        case .string(let value): value
        case .number(let value): value == value.rounded() && abs(value) < 1e15 ? Int(value) : value
        case .bool(let value): value
        case .null: NSNull()
        case .array(let values): values.map(\.foundation)
        case .object(let fields): fields.mapValues(\.foundation)
        }
    }

    /// A JSON string literal with every character outside printable ASCII written as a `\u` escape
    /// (surrogate pairs above U+FFFF): what the server receives does not depend on any encoder.
    static func literal(_ text: String) -> String {
        var out = "\""
        for unit in text.utf16 {
            switch unit {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x20..<0x7F: out += String(UnicodeScalar(UInt8(unit)))
            default: out += String(format: "\\u%04x", unit)
            }
        }
        return out + "\""
    }

    /// A JSON string literal with every character written as UTF-8, escaping only what JSON requires.
    static func utf8Literal(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case ..<0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A JSON object of string (or null) fields, written with `literal` (or `utf8Literal`).
    static func object(_ fields: [(String, String?)], escaped: Bool = true) -> [UInt8] {
        let write = escaped ? literal : utf8Literal
        let body = fields.map { "\(write($0.0)):\($0.1.map(write) ?? "null")" }.joined(separator: ",")
        return Array("{\(body)}".utf8)
    }
}

extension TestParley.Reply {
    /// The answer parsed exactly (see `ExactJSON`).
    var exact: ExactJSON { ExactJSON.parse(text) ?? .null }
}

extension StreamRead {
    /// An event's data parsed exactly.
    func exact(_ event: SSEEvent) -> ExactJSON { ExactJSON.parse(event.data) ?? .null }

    /// The `text` of every event of this type, in order.
    func texts(of type: String) -> [String] {
        events.filter { $0.type == type }.compactMap { exact($0)["text"]?.string }
    }

    /// Text-mode reconstruction, exactly: the last snapshot's content and every delta after it.
    var exactText: String { exactAppended(snapshotField: "content", event: "delta") }

    /// The reasoning rebuilt exactly: the last snapshot's, then every `reasoning` event.
    var exactReasoning: String { exactAppended(snapshotField: "reasoning", event: "reasoning") }

    private func exactAppended(snapshotField field: String, event name: String) -> String {
        var result = ""
        for event in events {
            if event.type == "snapshot" {
                result = exact(event)[field]?.string ?? ""
            } else if event.type == name {
                result += exact(event)["text"]?.string ?? ""
            }
        }
        return result
    }
}
