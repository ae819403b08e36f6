/// What the media step learned about a processed file, handed to `FileStore.saveFile` with the bytes.
/// The store computes no digest (hashing belongs to ParleyAuth); it records the ones it is given and
/// measures the stored size itself from the content file.
public struct FileMetadata: Sendable, Equatable {
    public var ownerID: String
    public var filename: String
    public var mediaType: String
    public var kind: StoredFile.Kind
    /// SHA-256 of the bytes to store (after any re-encode), lowercase hex.
    public var sha256: String
    /// SHA-256 of the bytes as uploaded, lowercase hex: the deduplication key.
    public var uploadSHA256: String
    public var width: Int?
    public var height: Int?
    public var pages: Int?
    public var textCharacters: Int?
    public var note: String?
    /// The media type of the thumbnail bytes, when some are given (ignored without them).
    public var thumbnailMediaType: String?

    public init(
        ownerID: String, filename: String, mediaType: String, kind: StoredFile.Kind, sha256: String,
        uploadSHA256: String, width: Int? = nil, height: Int? = nil, pages: Int? = nil,
        textCharacters: Int? = nil, note: String? = nil, thumbnailMediaType: String? = nil
    ) {
        self.ownerID = ownerID
        self.filename = filename
        self.mediaType = mediaType
        self.kind = kind
        self.sha256 = sha256
        self.uploadSHA256 = uploadSHA256
        self.width = width
        self.height = height
        self.pages = pages
        self.textCharacters = textCharacters
        self.note = note
        self.thumbnailMediaType = thumbnailMediaType
    }
}
