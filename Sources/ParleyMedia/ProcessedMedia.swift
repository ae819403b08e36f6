import Foundation

/// What the worker made of one file. Every URL but `content` in `.verify` mode and a text
/// document's `text` (both the input itself) lies in `workDirectory`, which belongs to the caller:
/// store what it needs, then remove the directory. The input file stays the caller's too.
public struct ProcessedMedia: Sendable, Equatable, Codable {
    public var kind: FileKind
    /// Decided from the bytes: image/png, image/jpeg, image/webp, application/pdf, text/plain, …
    public var mediaType: String
    /// The bytes to store: the re-encoded image, or the input for documents and `.verify`.
    public var content: URL
    public var width: Int?
    public var height: Int?
    /// A PDF's page count.
    public var pages: Int?
    /// The document's UTF-8 text (a PDF's, pages separated by a form feed; a text file itself), or nil.
    public var text: URL?
    /// Unicode scalars in `text`.
    public var textCharacters: Int?
    /// An image's thumbnail, about 256 px on the long edge.
    public var thumbnail: URL?
    public var thumbnailMediaType: String?
    /// "no extractable text" for a PDF without text.
    public var note: String?
    /// The call's own directory: the caller removes it when done.
    public var workDirectory: URL

    public init(kind: FileKind, mediaType: String, content: URL, width: Int? = nil, height: Int? = nil,
                pages: Int? = nil, text: URL? = nil, textCharacters: Int? = nil, thumbnail: URL? = nil,
                thumbnailMediaType: String? = nil, note: String? = nil, workDirectory: URL) {
        self.kind = kind
        self.mediaType = mediaType
        self.content = content
        self.width = width
        self.height = height
        self.pages = pages
        self.text = text
        self.textCharacters = textCharacters
        self.thumbnail = thumbnail
        self.thumbnailMediaType = thumbnailMediaType
        self.note = note
        self.workDirectory = workDirectory
    }

    /// The note a PDF without any text gets (scanned pages; no OCR).
    public static let noExtractableText = "no extractable text"
}
