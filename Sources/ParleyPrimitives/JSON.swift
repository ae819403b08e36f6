import Foundation

/// Any JSON value, for data Parley carries without owning its shape: a tool's input schema, the
/// arguments a model wrote, an MCP server's result. Parsed and written by Foundation's `JSONDecoder` and
/// `JSONEncoder` (never by hand); objects are written with sorted keys, so the same value always gives
/// the same text. Integers that fit `Int64` stay integers (`1`, never `1.0`).
public enum JSON: Sendable, Equatable, Hashable, Codable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let items = try? container.decode([JSON].self) {
            self = .array(items)
        } else {
            self = .object(try container.decode([String: JSON].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .integer(let integer): try container.encode(integer)
        case .number(let number):
            // JSON has no infinity or NaN: null here, so one such number never takes the whole text down.
            if number.isFinite { try container.encode(number) } else { try container.encodeNil() }
        case .string(let text): try container.encode(text)
        case .array(let items): try container.encode(items)
        case .object(let fields): try container.encode(fields)
        }
    }

    // MARK: - Text

    /// Parses JSON text (any top-level value); nil when it is not JSON.
    public init?(parsing text: some Collection<UInt8>) {
        guard let value = try? JSONDecoder().decode(JSON.self, from: Data(text)) else { return nil }
        self = value
    }

    /// Parses JSON text; nil when it is not JSON.
    public init?(parsing text: String) {
        self.init(parsing: Array(text.utf8))
    }

    private static let writer: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The value as compact JSON text, keys sorted. (Encoding a `JSON` cannot fail: a non-finite number,
    /// which no parsed value holds, is written as `null` where it stands.)
    public var text: String {
        if let data = try? Self.writer.encode(self) { return String(decoding: data, as: UTF8.self) }
        return "null"
    }

    // MARK: - Reading

    /// The object's fields, or nil when this is not an object.
    public var objectValue: [String: JSON]? {
        if case .object(let fields) = self { return fields }
        return nil
    }

    /// The string, or nil when this is not a string.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The Boolean, or nil when this is not one.
    public var boolValue: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    /// The array's items, or nil when this is not an array.
    public var arrayValue: [JSON]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// The number as a Double (integer or not), or nil when this is not a number.
    public var doubleValue: Double? {
        switch self {
        case .integer(let integer): Double(integer)
        case .number(let number): number
        default: nil
        }
    }

    /// A field of an object (nil for a missing field or a non-object).
    public subscript(key: String) -> JSON? {
        objectValue?[key]
    }
}
