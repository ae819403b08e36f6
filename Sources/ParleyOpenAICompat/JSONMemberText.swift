/// The text of one member's value in a JSON object, byte for byte as it was sent: what lets a value
/// Parley does not interpret (`response_format`, schema and all) reach the upstream unchanged, keys in
/// their order and numbers as written. Only used on bodies `JSONDecoder` has already accepted.
enum JSONMemberText {
    /// The value of the top-level member `key` in `json` (an object), or nil when it is absent. When
    /// a key repeats, the first one counts, as for `JSONDecoder` (so what is sent is what was checked).
    static func value(of key: String, in json: [UInt8]) -> String? {
        var index = 0
        skipSpace(json, &index)
        guard index < json.count, json[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        var found: Range<Int>?
        while index < json.count {
            skipSpace(json, &index)
            guard index < json.count, json[index] == UInt8(ascii: "\"") else { break }
            let nameStart = index
            skipValue(json, &index)
            let name = String(decoding: json[nameStart..<index], as: UTF8.self)
            skipSpace(json, &index)
            guard index < json.count, json[index] == UInt8(ascii: ":") else { break }
            index += 1
            skipSpace(json, &index)
            let valueStart = index
            skipValue(json, &index)
            // A key written with escapes (`"\u0073top"`) is not matched; such a body forwards nothing.
            if found == nil, name == "\"\(key)\"" { found = valueStart..<index }
            skipSpace(json, &index)
            guard index < json.count, json[index] == UInt8(ascii: ",") else { break }
            index += 1
        }
        return found.map { String(decoding: json[$0], as: UTF8.self) }
    }

    private static func skipSpace(_ json: [UInt8], _ index: inout Int) {
        while index < json.count, [0x20, 0x09, 0x0A, 0x0D].contains(json[index]) { index += 1 }
    }

    /// Moves past one value (string, object, array, number, literal) starting at `index`.
    private static func skipValue(_ json: [UInt8], _ index: inout Int) {
        var depth = 0
        var inString = false
        while index < json.count {
            let byte = json[index]
            index += 1
            if inString {
                if byte == UInt8(ascii: "\\") {
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 { return }
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return }
                if depth < 0 { index -= 1; return }
            case UInt8(ascii: ","), 0x20, 0x09, 0x0A, 0x0D:
                if depth == 0 { index -= 1; return }
            default: break
            }
        }
    }
}
