import Foundation

/// A file a user uploaded, as the store keeps it: what it is and how big, never its bytes (those are
/// read in chunks through `FileStore.fileContent`), so a list of files costs no more than its rows.
public struct StoredFile: Sendable, Equatable {
    /// What Parley makes of a file: an image goes to vision models as an image part, a document as text.
    public enum Kind: String, Sendable, Equatable {
        case image
        case document
    }

    public let id: String
    public let ownerID: String
    /// The name the uploader gave (as given; the API sanitises it for headers).
    public let filename: String
    public let mediaType: String
    public let kind: Kind
    /// The size of the stored bytes (after any re-encode).
    public let bytes: Int64
    /// SHA-256 of the stored bytes, lowercase hex.
    public let sha256: String
    /// SHA-256 of the bytes as uploaded, lowercase hex: the per-owner deduplication key.
    public let uploadSHA256: String
    public let width: Int?
    public let height: Int?
    public let pages: Int?
    /// Characters of the stored document text, when there is some.
    public let textCharacters: Int?
    /// What the uploader should know (e.g. "no extractable text").
    public let note: String?
    public let hasThumbnail: Bool
    public let createdAt: Date

    public init(
        id: String, ownerID: String, filename: String, mediaType: String, kind: Kind, bytes: Int64,
        sha256: String, uploadSHA256: String, width: Int? = nil, height: Int? = nil, pages: Int? = nil,
        textCharacters: Int? = nil, note: String? = nil, hasThumbnail: Bool, createdAt: Date
    ) {
        self.id = id
        self.ownerID = ownerID
        self.filename = filename
        self.mediaType = mediaType
        self.kind = kind
        self.bytes = bytes
        self.sha256 = sha256
        self.uploadSHA256 = uploadSHA256
        self.width = width
        self.height = height
        self.pages = pages
        self.textCharacters = textCharacters
        self.note = note
        self.hasThumbnail = hasThumbnail
        self.createdAt = createdAt
    }
}

extension StoredFile {
    /// The column list every `files` query selects, in the order `init(row:)` reads.
    static let columns = """
        id, owner_id, filename, media_type, kind, bytes, sha256, upload_sha256, width, height, pages, \
        text_chars, note, thumbnail_media_type, created_at
        """

    /// The same list with each column prefixed by `alias.` (for joins).
    static func columns(_ alias: String) -> String {
        columns.split(separator: ",").map { "\(alias).\($0.trimmingCharacters(in: .whitespaces))" }
            .joined(separator: ", ")
    }

    /// Reads the columns `columns` lists.
    init(row: Row) throws(StoreError) {
        try self.init(row: row, offset: 0)
    }

    /// Reads the columns `columns` lists, starting at column `offset`.
    init(row: Row, offset: Int32) throws(StoreError) {
        func int(_ column: Int32) -> Int? { row.optionalInt64(offset + column).map { Int($0) } }
        let id = row.text(offset)
        let kind = row.text(offset + 4)
        guard let known = Kind(rawValue: kind) else {
            throw StoreError.corrupt("file \(id) has an unknown kind '\(kind)'")
        }
        self.init(
            id: id, ownerID: row.text(offset + 1), filename: row.text(offset + 2), mediaType: row.text(offset + 3),
            kind: known, bytes: row.int64(offset + 5), sha256: row.text(offset + 6),
            uploadSHA256: row.text(offset + 7), width: int(8), height: int(9), pages: int(10),
            textCharacters: int(11), note: row.optionalText(offset + 12), hasThumbnail: !row.isNull(offset + 13),
            createdAt: Date(millisecondsSince1970: row.int64(offset + 14)))
    }
}
