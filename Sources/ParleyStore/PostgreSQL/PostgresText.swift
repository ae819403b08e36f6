/// How a Swift string is stored in a PostgreSQL `text` column, which cannot hold U+0000 (NUL).
///
/// SQLite stores every text exactly, and the store promises the same on both engines ("every written
/// text reads back exactly"), so on PostgreSQL U+0000 is written as the escape U+E000 followed by `0`,
/// and U+E000 itself (a private-use character) as U+E000 twice; reading undoes both. Text without either
/// character (nearly all of it) is stored as it is, and a scan for one lead byte (0x00 or 0xEE) is all
/// it costs. SQL that compares whole values (ids, equality) is unaffected; functions over an escaped
/// text (its length, a substring search) see the escape, for texts that hold U+0000 or U+E000 only.
enum PostgresText {
    /// U+E000 in UTF-8.
    private static let escape: [UInt8] = [0xEE, 0x80, 0x80]

    /// The UTF-8 bytes to store for `text` (never a zero byte), appended to `buffer`.
    static func append(_ text: String, to buffer: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            guard bytes.contains(where: { $0 == 0 || $0 == 0xEE }) else {
                buffer.append(contentsOf: bytes)
                return
            }
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == 0 {
                    buffer.append(contentsOf: escape)
                    buffer.append(UInt8(ascii: "0"))
                } else if isEscape(bytes, at: index) {
                    buffer.append(contentsOf: escape)
                    buffer.append(contentsOf: escape)
                    index += escape.count
                    continue
                } else {
                    buffer.append(byte)
                }
                index += 1
            }
        }
    }

    /// The string a stored value of `count` bytes at `bytes` stands for.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard bytes.contains(0xEE) else { return String(decoding: bytes, as: UTF8.self) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if isEscape(bytes, at: index) {
                let next = index + escape.count
                if next < bytes.count, bytes[next] == UInt8(ascii: "0") {
                    decoded.append(0)
                    index = next + 1
                    continue
                }
                if isEscape(bytes, at: next) {
                    decoded.append(contentsOf: escape)
                    index = next + escape.count
                    continue
                }
                // Not written by this scheme (another tool's row): kept as it is.
            }
            decoded.append(bytes[index])
            index += 1
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    private static func isEscape(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        index + 2 < bytes.count && bytes[index] == 0xEE && bytes[index + 1] == 0x80 && bytes[index + 2] == 0x80
    }
}
