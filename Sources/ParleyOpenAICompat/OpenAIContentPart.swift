import Foundation

/// A file a user message of `/v1/chat/completions` carries, as read from its content parts: bytes the
/// request embeds (decoded, not yet checked: `OpenAIAttachments` checks them as an upload), or one of
/// the caller's files by id.
enum OpenAIFilePart: Equatable {
    /// `image` for an `image_url` part, which must hold an image; `filename` as the `file` part gave it.
    case inline(bytes: Data, filename: String?, image: Bool)
    /// `{"type":"file","file":{"file_id"}}`: a file the caller uploaded (`POST /api/files`).
    case stored(id: String)
}

/// One content part of a message, in OpenAI's shapes:
/// - `{"type":"text","text"}`;
/// - `{"type":"image_url","image_url":{"url":"data:image/png;base64,…","detail"?}}`: only data URLs,
///   since Parley never fetches a URL a client names (a server-side request forgery otherwise); the
///   declared media type and `detail` are ignored (the bytes decide, and images are downscaled by
///   PARLEY_IMAGE_MAX_EDGE);
/// - `{"type":"file","file":{"file_data":"data:application/pdf;base64,…" (or bare base64),"filename"?}}`
///   or `{"type":"file","file":{"file_id"}}`.
struct OpenAIContentPart: Decodable {
    /// A text part's text; nil for a file part.
    let text: String?
    let file: OpenAIFilePart?

    private enum CodingKeys: String, CodingKey {
        case type, text, file
        case imageURL = "image_url"
    }

    private struct ImageURL: Decodable {
        let url: String
    }

    private struct File: Decodable {
        let fileData: String?
        let fileID: String?
        let filename: String?

        enum CodingKeys: String, CodingKey {
            case filename
            case fileData = "file_data"
            case fileID = "file_id"
        }
    }

    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let type = try? container.decode(String.self, forKey: .type) else {
            throw Self.invalid("Every content part needs a 'type' string.")
        }
        switch type {
        case "text":
            guard let text = try? container.decode(String.self, forKey: .text) else {
                throw Self.invalid("A text part needs a 'text' string.")
            }
            self.text = text
            file = nil
        case "image_url":
            guard let image = try? container.decode(ImageURL.self, forKey: .imageURL) else {
                throw Self.invalid("An image_url part needs 'image_url': {\"url\": \"data:image/…;base64,…\"}.")
            }
            text = nil
            file = .inline(bytes: try Self.bytes(ofDataURL: image.url, bareBase64: false), filename: nil, image: true)
        case "file":
            guard let part = try? container.decode(File.self, forKey: .file),
                  (part.fileData == nil) != (part.fileID == nil) else {
                throw Self.invalid("A file part needs 'file': {\"file_data\": \"data:…;base64,…\", \"filename\"} "
                                   + "or {\"file_id\"}, one of the two.")
            }
            text = nil
            if let id = part.fileID {
                file = .stored(id: id)
            } else {
                file = .inline(bytes: try Self.bytes(ofDataURL: part.fileData ?? "", bareBase64: true),
                               filename: part.filename, image: false)
            }
        default:
            throw Self.invalid("Content part type '\(type)' is not supported: use text, image_url (a data URL) "
                               + "or file.")
        }
    }

    /// The bytes of `data:<media type>;base64,<data>` (or of bare base64 when `bareBase64`). Any other
    /// URL is refused: Parley does not fetch what a client names.
    static func bytes(ofDataURL url: String, bareBase64: Bool) throws(OpenAIChatRequest.FieldError) -> Data {
        var payload = Substring(url)
        if url.prefix(5).lowercased() == "data:" {
            guard let comma = url.firstIndex(of: ","),
                  url[..<comma].lowercased().hasSuffix(";base64") else {
                throw OpenAIChatRequest.FieldError(
                    field: "messages", message: "A data URL must be base64: data:<media type>;base64,<data>.",
                    code: "invalid_data_url")
            }
            payload = url[url.index(after: comma)...]
        } else if url.contains(":") {
            throw OpenAIChatRequest.FieldError(
                field: "messages",
                message: "Parley does not fetch URLs a request names: send the file inline as a data URL "
                    + "(data:image/png;base64,…), or upload it (POST /api/files) and send a 'file' part with its "
                    + "'file_id'.",
                code: "remote_url_not_allowed")
        } else if !bareBase64 {
            throw OpenAIChatRequest.FieldError(
                field: "messages", message: "An image_url must be a data URL: data:<media type>;base64,<data>.",
                code: "invalid_data_url")
        }
        guard let data = Data(base64Encoded: String(payload)) else {
            throw OpenAIChatRequest.FieldError(field: "messages", message: "The data URL's base64 does not decode.",
                                               code: "invalid_base64")
        }
        return data
    }

    private static func invalid(_ message: String) -> OpenAIChatRequest.FieldError {
        OpenAIChatRequest.FieldError(field: "messages", message: message)
    }
}
