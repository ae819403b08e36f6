/// A PostgreSQL array literal of texts, built as UTF-8 bytes for the search index's batches
/// (`PostgresSearchIndexer`): every element double-quoted, with `"` and `\` escaped, so any text
/// (braces, commas and quotes included) is one element, and PostgreSQL parses it back unchanged.
struct PostgresArrayLiteral {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var count = 0

    /// The literal so far, closed.
    var text: String {
        String(decoding: bytes + [UInt8(ascii: "}")], as: UTF8.self)
    }

    /// Appends one element (itself an array literal, when it is one).
    mutating func append(_ element: String) {
        open()
        for byte in element.utf8 { escaped(byte) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `prefix` (already valid UTF-8) followed by three code points, as one element.
    mutating func append(prefix: [UInt8], _ first: Unicode.Scalar, _ second: Unicode.Scalar, _ third: Unicode.Scalar) {
        open()
        for byte in prefix { escaped(byte) }
        for scalar in [first, second, third] {
            for byte in scalar.utf8 { escaped(byte) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func open() {
        if count > 0 { bytes.append(UInt8(ascii: ",")) }
        count += 1
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escaped(_ byte: UInt8) {
        if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
        bytes.append(byte)
    }
}
