import ParleyPrimitives
import ParleyProviders

/// One file of a message as the context budget sees it: what it is, its name and type, and its size
/// (an image's bytes, a document's text in characters). A plain value.
public struct AttachmentSummary: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case image, document
    }

    /// The cost of one image in budget characters: 1,600 tokens, at the four characters per token the
    /// character budget stands for. 1,600 is what Anthropic documents for its largest image size
    /// (about 1.15 megapixels, width × height / 750); OpenAI charges at most 765 tokens for the
    /// 2048-px images Parley sends (high detail: 4 tiles of 170, plus 85). The larger of the two is
    /// counted, so an image is never cheaper in the budget than at either provider.
    public static let imageCharacters = 6_400

    public var kind: Kind
    public var filename: String
    public var mediaType: String
    /// An image's byte count, or a document's text length in characters.
    public var size: Int

    public init(kind: Kind, filename: String, mediaType: String, size: Int) {
        self.kind = kind
        self.filename = filename
        self.mediaType = mediaType
        self.size = size
    }

    /// The summary of a loaded file (an image has no filename in a `ChatAttachment`).
    public init(_ attachment: ChatAttachment) {
        switch attachment {
        case .image(let mediaType, let data):
            self.init(kind: .image, filename: "", mediaType: mediaType, size: data.count)
        case .document(let filename, let mediaType, let text):
            self.init(kind: .document, filename: filename, mediaType: mediaType, size: text.count)
        }
    }

    /// What the file costs of the context budget, in characters: a fixed `imageCharacters` per image;
    /// a document's text, plus its name, type, the `<document>` tags and the blank line after them.
    public var characters: Int {
        switch kind {
        case .image: Self.imageCharacters
        case .document: size + filename.count + mediaType.count + Self.documentFraming
        }
    }

    /// `<document name="" type="">`, a newline, a newline, `</document>` and the blank line after.
    private static let documentFraming = 26 + 1 + 1 + 11 + 2

    /// How a note names the file: `the image (image/png, 12,345 bytes)`,
    /// `the document "notes.md" (text/markdown, 1,500 characters)`.
    var described: String {
        switch kind {
        case .image:
            let name = filename.isEmpty ? "" : " \"\(filename)\""
            return "the image\(name) (\(mediaType), \(size.groupedDigits) bytes)"
        case .document:
            return "the document \"\(filename)\" (\(mediaType), \(size.groupedDigits) characters)"
        }
    }
}
