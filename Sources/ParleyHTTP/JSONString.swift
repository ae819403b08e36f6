import Foundation

/// The one JSON string-literal writer: error bodies here, and every event, audit line and snapshot
/// the server writes (ParleyServer's `JSONWriter`). RFC 8259 escaping, plus U+2028/U+2029 escaped
/// so the text is also safe inside JavaScript.
public enum JSONString {
    /// Appends `value` as a JSON string literal. Works on UTF-8 bytes: every character that needs
    /// escaping is ASCII except U+2028/U+2029 (E2 80 A8 / E2 80 A9), so other bytes are copied as
    /// they are. This runs over every byte of every delta for every subscriber (a per-scalar walk
    /// was ~5% of the relay's CPU).
    public static func append(_ value: String, to out: inout String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count + 2)
        bytes.append(UInt8(ascii: "\""))
        if value.utf8.withContiguousStorageIfAvailable({ escape($0, into: &bytes) }) == nil {
            Array(value.utf8).withUnsafeBufferPointer { escape($0, into: &bytes) }
        }
        bytes.append(UInt8(ascii: "\""))
        out += String(decoding: bytes, as: UTF8.self)
    }

    /// `value` as a JSON string literal.
    public static func literal(_ value: String) -> String {
        var out = ""
        append(value, to: &out)
        return out
    }

    private static func escape(_ source: UnsafeBufferPointer<UInt8>, into bytes: inout [UInt8]) {
        var index = 0
        while index < source.count {
            let byte = source[index]
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
            case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
            case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
            case ..<0x20: bytes.append(contentsOf: String(format: "\\u%04x", UInt32(byte)).utf8)
            case 0xE2 where index + 2 < source.count && source[index + 1] == 0x80
                && (source[index + 2] == 0xA8 || source[index + 2] == 0xA9):
                bytes.append(contentsOf: (source[index + 2] == 0xA8 ? #"\u2028"# : #"\u2029"#).utf8)
                index += 2
            default: bytes.append(byte)
            }
            index += 1
        }
    }
}
