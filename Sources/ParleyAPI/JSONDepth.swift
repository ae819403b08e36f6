/// How deeply a JSON text nests arrays and objects, found with one pass over the bytes (strings
/// skipped, escapes included) and no recursion, so it is safe on any input.
package enum JSONDepth {
    /// The byte offset where nesting first goes past `limit`, or nil if it never does.
    package static func exceeds(_ limit: Int, in bytes: [UInt8]) -> Int? {
        var depth = 0
        var inString = false
        var escaped = false
        for (offset, byte) in bytes.enumerated() {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return offset }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
            default:
                break
            }
        }
        return nil
    }
}
