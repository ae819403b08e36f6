import ParleyAPI
import ParleyStore

/// A stored file as the API shows it (`POST /api/files`, `GET /api/files`). `bytes` and `sha256` are
/// the stored file's, after any re-encode; the upload's own hash is what deduplication compares.
struct FileResource: Encodable {
    let file: StoredFile

    init(_ file: StoredFile) {
        self.file = file
    }

    enum CodingKeys: String, CodingKey {
        case id, filename, bytes, sha256, kind, width, height, pages, note
        case mediaType = "media_type"
        case textChars = "text_chars"
        case createdAt = "created_at"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(file.id, forKey: .id)
        try container.encode(file.filename, forKey: .filename)
        try container.encode(file.mediaType, forKey: .mediaType)
        try container.encode(file.bytes, forKey: .bytes)
        try container.encode(file.sha256, forKey: .sha256)
        try container.encode(file.kind.rawValue, forKey: .kind)
        try container.encodeIfPresent(file.width, forKey: .width)
        try container.encodeIfPresent(file.height, forKey: .height)
        try container.encodeIfPresent(file.pages, forKey: .pages)
        try container.encodeIfPresent(file.textCharacters, forKey: .textChars)
        try container.encodeIfPresent(file.note, forKey: .note)
        try container.encode(Timestamp.format(file.createdAt), forKey: .createdAt)
    }
}

/// `GET /api/files`: a page of the caller's files, newest first.
struct FilePageResource: Encodable {
    let items: [FileResource]
    let nextCursor: String?

    enum CodingKeys: String, CodingKey {
        case items
        case nextCursor = "next_cursor"
    }

    /// `next_cursor` is always present: null on the last page (as for conversations).
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(items, forKey: .items)
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}

/// `DELETE /api/files/{id}`: removed, or kept because messages still show it.
struct FileDeletionResource: Encodable {
    let id: String
    let deleted: Bool
    /// How many messages still hold the file (0 when it was removed).
    let keptForMessages: Int
    let message: String

    enum CodingKeys: String, CodingKey {
        case id, deleted, message
        case keptForMessages = "kept_for_messages"
    }
}
