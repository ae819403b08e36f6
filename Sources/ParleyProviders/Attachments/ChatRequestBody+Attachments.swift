import Foundation

/// A user turn's attachments in each dialect's request body. Documents are text before the turn's own
/// (`ChatMessage.textWithDocuments`), for both; images are OpenAI `image_url` parts holding a data URL
/// after the text, or Anthropic `image` blocks with a base64 source before it (Anthropic's guide:
/// images first). A turn without images keeps plain string content, so a turn without attachments is
/// encoded exactly as before they existed.
///
/// Base64 is made once per image by Foundation (`base64EncodedString`, a single pass into one string);
/// no per-byte arrays are built for the few megabytes an image may hold.
extension ChatRequestBody {
    /// An OpenAI content part: `{"type":"text","text"}` or `{"type":"image_url","image_url":{"url"}}`.
    enum OpenAIPart: Encodable {
        case text(String)
        case imageURL(String)

        private enum CodingKeys: String, CodingKey {
            case type, text
            case imageURL = "image_url"
        }

        private struct ImageURL: Encodable {
            let url: String
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .text(let text):
                try container.encode("text", forKey: .type)
                try container.encode(text, forKey: .text)
            case .imageURL(let url):
                try container.encode("image_url", forKey: .type)
                try container.encode(ImageURL(url: url), forKey: .imageURL)
            }
        }
    }

    /// Anthropic's `{"type":"base64","media_type","data"}` image source.
    struct ImageSource: Encodable {
        let type = "base64"
        let mediaType: String
        let data: String

        private enum CodingKeys: String, CodingKey {
            case type, data
            case mediaType = "media_type"
        }
    }

    static func base64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }

    /// OpenAI's content for a turn: its text (with documents) as a string, or, when it has images, a
    /// text part (left out when empty) then one `image_url` part per image.
    static func openAIContent(_ message: ChatMessage) -> Message.Content {
        let text = message.textWithDocuments
        let images = message.images
        guard !images.isEmpty else { return .text(text) }
        let textPart: [OpenAIPart] = text.isEmpty ? [] : [.text(text)]
        return .parts(textPart + images.map { .imageURL("data:\($0.mediaType);base64," + base64($0.data)) })
    }

    /// Anthropic's blocks for a user turn's content: one `image` block per image, then its text (with
    /// documents; left out when empty, as Anthropic refuses empty text blocks).
    static func anthropicBlocks(_ message: ChatMessage) -> [Block] {
        let text = message.textWithDocuments
        let images = message.images.map { Block.image(ImageSource(mediaType: $0.mediaType, data: base64($0.data))) }
        return images + (text.isEmpty ? [] : [.text(text)])
    }
}
