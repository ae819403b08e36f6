/// A file a user turn carries to the model. Images go as the dialect's image part (only to models that
/// see images: `VisionModels`); documents are always text, so every model reads them the same way and
/// the context budget can count them.
public enum ChatAttachment: Sendable, Equatable {
    /// An image's bytes as stored (already re-encoded and sized for providers at upload).
    case image(mediaType: String, data: [UInt8])
    /// A document's UTF-8 text (a PDF's extracted text, or the text file itself).
    case document(filename: String, mediaType: String, text: String)

    /// The document as the model reads it: `<document name="…" type="…">`, a newline, the text, a
    /// newline, `</document>`; nil for an image.
    ///
    /// Why this delimiter: XML-like tags are what Anthropic's prompting guide recommends for long
    /// documents and OpenAI-style models read them as well; a tag carries the filename and type as
    /// attributes without any framing of its own in the text, and the model can tell where each
    /// document ends and the user's own words begin. The text is not escaped (source code, CSV and
    /// JSON must reach the model verbatim); only the attributes are, so a filename cannot close the tag.
    public var documentText: String? {
        guard case .document(let filename, let mediaType, let text) = self else { return nil }
        return "<document name=\"\(Self.attribute(filename))\" type=\"\(Self.attribute(mediaType))\">\n"
            + text + "\n</document>"
    }

    /// The image's media type and bytes, nil for a document.
    public var image: (mediaType: String, data: [UInt8])? {
        guard case .image(let mediaType, let data) = self else { return nil }
        return (mediaType, data)
    }

    /// A value for an attribute in double quotes: `&`, `"`, `<` and `>` as entities.
    static func attribute(_ value: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count)
        for character in value {
            switch character {
            case "&": escaped += "&amp;"
            case "\"": escaped += "&quot;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

extension ChatMessage {
    /// The text the model reads for this turn: each document wrapped (`ChatAttachment.documentText`),
    /// then the turn's own text, separated by blank lines. Just `content` without documents.
    public var textWithDocuments: String {
        let documents = attachments.compactMap(\.documentText)
        guard !documents.isEmpty else { return content }
        return (documents + (content.isEmpty ? [] : [content])).joined(separator: "\n\n")
    }

    /// The turn's images, in order.
    var images: [(mediaType: String, data: [UInt8])] {
        attachments.compactMap(\.image)
    }
}
