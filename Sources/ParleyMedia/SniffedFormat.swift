/// The format `FileSniffer` found in a file's first bytes: what the worker decodes it as.
public enum SniffedFormat: Sendable, Equatable, Codable {
    case png, jpeg, gif, webp, pdf
    /// UTF-8 text (so far: the worker validates the whole file); `mediaType` chosen by the extension.
    case text(mediaType: String)

    public var kind: FileKind {
        switch self {
        case .png, .jpeg, .gif, .webp: .image
        case .pdf, .text: .document
        }
    }

    /// The media type of the bytes as given (a GIF is stored as PNG after an upload).
    public var mediaType: String {
        switch self {
        case .png: "image/png"
        case .jpeg: "image/jpeg"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .pdf: "application/pdf"
        case .text(let mediaType): mediaType
        }
    }
}
