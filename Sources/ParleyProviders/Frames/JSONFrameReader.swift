import CSimdjson

/// Parses upstream frames with simdjson (Debian's libsimdjson, through the C shim `CSimdjson`): about
/// a tenth of `JSONDecoder`'s cost per chunk (`make bench`, bench/chunk-results.md). simdjson is
/// stricter than `JSONDecoder` (it refuses trailing commas, a leading U+FEFF before the value, numbers
/// out of range anywhere, lone surrogate escapes), so a frame it refuses is decoded again by
/// `JSONDecoder`, which decides as it always did: the fast path never reads a frame differently, it
/// only reads the well-formed ones sooner. Text keeps every byte the model sent (U+FEFF, NUL).
///
/// One per stream parser, used by one owner at a time; values read from a parse are valid only
/// inside that parse's closure.
final class JSONFrameReader {
    /// Nesting levels simdjson accepts: `JSONDecoder`'s limit, so nothing deeper is read here that
    /// it would refuse.
    static let maxDepth = 512

    private let parser: OpaquePointer?

    init() {
        parser = parley_json_parser_new(Self.maxDepth)
    }

    deinit {
        parley_json_parser_free(parser)
    }

    /// `read`'s result on the frame's root value, or nil when simdjson refuses the text (or `read`
    /// gives nil: the frame is then for `JSONDecoder`).
    func read<T>(_ text: String, _ read: (JSONFrameValue) -> T?) -> T? {
        guard let parser else { return nil }
        var text = text
        return text.withUTF8 { bytes in
            var root = parley_json_value()
            guard parley_json_parse(parser, bytes.baseAddress, bytes.count, &root) else { return nil }
            return read(JSONFrameValue(raw: root))
        }
    }
}

/// A value of the frame being read, with `LenientDecoding`'s rules: a field that is absent, null or
/// of another type reads as nil.
struct JSONFrameValue {
    let raw: parley_json_value

    var kind: parley_json_kind { parley_json_kind_of(raw) }
    var isObject: Bool { kind == PARLEY_JSON_OBJECT }
    var isNull: Bool { kind == PARLEY_JSON_NULL }

    /// The field, null included (nil when absent or when this is not an object).
    func field(_ key: StaticString) -> JSONFrameValue? {
        var out = parley_json_value()
        let found = key.withUTF8Buffer { name in
            name.withMemoryRebound(to: CChar.self) { parley_json_field(raw, $0.baseAddress, $0.count, &out) }
        }
        return found ? JSONFrameValue(raw: out) : nil
    }

    /// This value as a string (escapes decoded, every character kept), or nil.
    var string: String? {
        var bytes: UnsafePointer<CChar>?
        var count = 0
        guard parley_json_string(raw, &bytes, &count), let bytes else { return nil }
        return bytes.withMemoryRebound(to: UInt8.self, capacity: count) {
            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
        }
    }

    /// The field as a string, or nil (`lenient(String.self, key)`).
    func string(_ key: StaticString) -> String? { field(key)?.string }

    /// A non-empty string (`text(key)`: empty and null both mean "nothing here").
    func text(_ key: StaticString) -> String? {
        guard let value = string(key), !value.isEmpty else { return nil }
        return value
    }

    /// An integer, also when written with a fraction or exponent (`integer(key)`): what `JSONDecoder`
    /// reads as `Int`, else a finite number under 1e15 truncated.
    func integer(_ key: StaticString) -> Int? {
        guard let value = field(key) else { return nil }
        switch value.kind {
        case PARLEY_JSON_INT64:
            var number: Int64 = 0
            return parley_json_int64(value.raw, &number) ? Int(exactly: number) : nil
        case PARLEY_JSON_DOUBLE:
            var number = 0.0
            guard parley_json_double(value.raw, &number) else { return nil }
            if let exact = Int(exactly: number) { return exact }
            return number.isFinite && abs(number) < 1e15 ? Int(number) : nil
        default:
            return nil  // UINT64 is past Int.max, and past 1e15 as a Double
        }
    }

    /// The field when it is an object (what a nested `Decodable` struct needs), or nil.
    func object(_ key: StaticString) -> JSONFrameValue? {
        guard let value = field(key), value.isObject else { return nil }
        return value
    }

    /// The field's items when it is an array of objects only (`lenient([T].self, key)` for a struct
    /// `T`: one item that is not an object fails the whole array), or nil.
    func objects(_ key: StaticString) -> [JSONFrameValue]? {
        guard let value = field(key), value.kind == PARLEY_JSON_ARRAY else { return nil }
        let count = parley_json_items(value.raw, nil, 0)
        var items = [parley_json_value](repeating: parley_json_value(), count: count)
        _ = items.withUnsafeMutableBufferPointer { parley_json_items(value.raw, $0.baseAddress, count) }
        var values: [JSONFrameValue] = []
        values.reserveCapacity(count)
        for item in items {
            let value = JSONFrameValue(raw: item)
            guard value.isObject else { return nil }
            values.append(value)
        }
        return values
    }

    /// Whether the field is present and not null.
    func has(_ key: StaticString) -> Bool {
        guard let value = field(key) else { return false }
        return !value.isNull
    }
}
