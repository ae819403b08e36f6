/// One request header as sent, with its name lower-cased once (header names are ASCII tokens, so
/// an ASCII fold is exact and far cheaper than Unicode case mapping on every request).
struct HeaderField: Sendable {
    /// The name as sent (framing checks look at it raw).
    let name: String
    /// The name in ASCII lower case, for comparisons.
    let key: String
    let value: String

    init(name: String, value: String) {
        self.name = name
        self.value = value
        key = name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A })
            ? String(decoding: name.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
            : name
    }
}
