import ParleyPrimitives

/// The position after the last conversation of a page: its `(updated_at, id)`, the keyset that
/// `ORDER BY updated_at DESC, id DESC` continues from. Opaque to clients (base64url of
/// "millis:id"), so the format may change without breaking them.
struct PageCursor: Equatable {
    let updatedAtMilliseconds: Int64
    let id: String

    init(updatedAtMilliseconds: Int64, id: String) {
        self.updatedAtMilliseconds = updatedAtMilliseconds
        self.id = id
    }

    /// Parses a cursor made by `encoded`; any other text throws `StoreError.invalidCursor`.
    init(encoded: String) throws(StoreError) {
        guard encoded.utf8.count <= PageCursor.maxEncodedLength,
              let bytes = Base64URL.decode(encoded),
              let text = String(validating: bytes, as: UTF8.self),
              let colon = text.firstIndex(of: ":"),
              let millis = Int64(text[..<colon]), millis >= 0
        else { throw StoreError.invalidCursor }
        let id = String(text[text.index(after: colon)...])
        guard !id.isEmpty, id.utf8.count <= PageCursor.maxIDLength,
              id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { throw StoreError.invalidCursor }
        self.init(updatedAtMilliseconds: millis, id: id)
    }

    var encoded: String {
        Base64URL.encode(Array("\(updatedAtMilliseconds):\(id)".utf8))
    }

    /// Ids are 22 characters; the limits leave room for a longer id scheme and reject junk early.
    static let maxIDLength = 64
    static let maxEncodedLength = 128
}
