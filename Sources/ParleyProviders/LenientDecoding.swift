import Foundation

/// Reading model servers' JSON with `JSONDecoder`, as leniently as the servers write it.
///
/// Why `JSONDecoder` and not `JSONSerialization`: on Linux, Foundation's JSONSerialization drops a
/// U+FEFF that starts a JSON string value ("\u{FEFF}c" reads as "c"), and Parley must never change
/// what the model said. JSONDecoder keeps every character. One shared decoder: it holds no state
/// between calls and is Sendable.
enum LenientDecoding {
    static let decoder = JSONDecoder()

    /// The frame `data` decoded as `T`, or nil when it is not JSON of that shape (not an object).
    static func decode<T: Decodable>(_ type: T.Type, from text: String) -> T? {
        try? decoder.decode(type, from: Data(text.utf8))
    }
}

extension KeyedDecodingContainer {
    /// The value, or nil when the key is absent, null or holds another type: a field Parley cannot
    /// read is ignored, as it was with JSONSerialization, instead of failing the whole frame.
    func lenient<T: Decodable>(_ type: T.Type, _ key: Key) -> T? {
        (try? decodeIfPresent(type, forKey: key)) ?? nil
    }

    /// A non-empty string (empty and null both mean "nothing here" in streamed deltas).
    func text(_ key: Key) -> String? {
        guard let value = lenient(String.self, key), !value.isEmpty else { return nil }
        return value
    }

    /// An integer, also when written as a JSON number with a fraction or exponent (`3.0`, `1e2`).
    func integer(_ key: Key) -> Int? {
        if let value = lenient(Int.self, key) { return value }
        guard let value = lenient(Double.self, key), value.isFinite, abs(value) < 1e15 else { return nil }
        return Int(value)
    }
}

/// An `error` field that may be a string or an object with a `message` (servers write both).
struct UpstreamErrorField: Decodable {
    let message: String

    private enum CodingKeys: String, CodingKey {
        case message
    }

    init(from decoder: Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            message = text
        } else {
            message = (try? decoder.container(keyedBy: CodingKeys.self))?.lenient(String.self, .message)
                ?? "unknown error"
        }
    }
}
