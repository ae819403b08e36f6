/// The store's SQL with SQLite's placeholders (`?`, `?NNN`) rewritten to PostgreSQL's (`$n`).
///
/// Why: the operations keep one SQL text for both engines, and libpq only knows `$n`. The numbering
/// is SQLite's: `?NNN` is parameter NNN, a bare `?` is one more than the largest number so far, so the
/// same argument array binds the same way on both engines. Placeholders inside quoted text are left
/// alone: `'…'` literals (`''` escapes, backslash escapes in `E'…'`), `"…"` identifiers, `$tag$…$tag$`
/// bodies, `--` and (nested) `/* */` comments. PostgreSQL's `?`, `?|` and `?&` jsonb operators cannot
/// be written in this SQL: use their functions (`jsonb_exists`, …).
struct PostgresPlaceholders: Equatable {
    /// The SQL for PostgreSQL.
    let sql: String
    /// How many parameters it takes: the largest placeholder number.
    let parameterCount: Int

    init(rewriting source: String) {
        let bytes = Array(source.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 8)
        var largest = 0
        var index = 0
        var copied = 0  // bytes before this index are in `output`
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "?"):
                var end = index + 1
                while end < bytes.count, Self.isDigit(bytes[end]) { end += 1 }
                let number = end > index + 1
                    ? Int(String(decoding: bytes[(index + 1)..<end], as: UTF8.self)) ?? 0
                    : largest + 1
                largest = max(largest, number)
                output.append(contentsOf: bytes[copied..<index])
                output.append(UInt8(ascii: "$"))
                output.append(contentsOf: String(number).utf8)
                index = end
                copied = end
            case UInt8(ascii: "'"):
                let escapes = index > 0 && (bytes[index - 1] | 0x20) == UInt8(ascii: "e")
                    && (index < 2 || !Self.isIdentifier(bytes[index - 2]))
                index = Self.endOfQuoted(bytes, from: index, quote: byte, backslashEscapes: escapes)
            case UInt8(ascii: "\""):
                index = Self.endOfQuoted(bytes, from: index, quote: byte, backslashEscapes: false)
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                index = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                index = Self.endOfBlockComment(bytes, from: index)
            case UInt8(ascii: "$") where index == 0 || !Self.isIdentifier(bytes[index - 1]):
                index = Self.endOfDollarQuoted(bytes, from: index)
            default:
                index += 1
            }
        }
        output.append(contentsOf: bytes[copied...])
        sql = String(decoding: output, as: UTF8.self)
        parameterCount = largest
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func isIdentifier(_ byte: UInt8) -> Bool {
        isDigit(byte) || byte == UInt8(ascii: "_") || byte >= 0x80
            || ((byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z"))
    }

    /// The index after the quote that closes the one at `start`; a doubled quote is an escape.
    private static func endOfQuoted(_ bytes: [UInt8], from start: Int, quote: UInt8, backslashEscapes: Bool) -> Int {
        var index = start + 1
        while index < bytes.count {
            if backslashEscapes, bytes[index] == UInt8(ascii: "\\") {
                index += 2
                continue
            }
            if bytes[index] == quote {
                if index + 1 < bytes.count, bytes[index + 1] == quote {
                    index += 2
                    continue
                }
                return index + 1
            }
            index += 1
        }
        return bytes.count
    }

    /// The index after the `*/` that closes the comment at `start` (PostgreSQL's comments nest).
    private static func endOfBlockComment(_ bytes: [UInt8], from start: Int) -> Int {
        var depth = 0
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "/"), bytes[index + 1] == UInt8(ascii: "*") {
                depth += 1
                index += 2
            } else if bytes[index] == UInt8(ascii: "*"), bytes[index + 1] == UInt8(ascii: "/") {
                depth -= 1
                index += 2
                if depth == 0 { return index }
            } else {
                index += 1
            }
        }
        return bytes.count
    }

    /// At a `$`: the index after the `$tag$…$tag$` body that starts there, or after the `$` alone
    /// when it does not open one (`$1` is a parameter: a tag does not start with a digit).
    private static func endOfDollarQuoted(_ bytes: [UInt8], from start: Int) -> Int {
        var end = start + 1
        if end < bytes.count, isDigit(bytes[end]) { return end }
        while end < bytes.count, isIdentifier(bytes[end]) { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: "$") else { return start + 1 }
        let tag = bytes[start...end]
        var index = end + 1
        while index + tag.count <= bytes.count {
            if bytes[index] == UInt8(ascii: "$"), bytes[index..<(index + tag.count)].elementsEqual(tag) {
                return index + tag.count
            }
            index += 1
        }
        return bytes.count
    }
}
