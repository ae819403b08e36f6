import ParleyPrimitives

/// What the demo model says of a turn's files: each image's pixel size (from its header), format and
/// byte count, each document's name, type and length. Deterministic, so tests can compare it whole.
extension DemoProvider {
    /// The sentences for `attachments` (`I see 1 image: 640×480 PNG, 12,345 bytes.`), nil when there are none.
    public static func description(of attachments: [ChatAttachment]) -> String? {
        var sentences: [String] = []
        let images = attachments.compactMap(\.image)
        if !images.isEmpty {
            let each = images.map { image -> String in
                let format = image.mediaType.split(separator: "/").last.map { $0.uppercased() } ?? image.mediaType
                let size = ImageSize(reading: image.data).map { "\($0.width)×\($0.height) " } ?? ""
                return "\(size)\(format), \(image.data.count.groupedDigits) bytes"
            }
            sentences.append("I see \(counted(images.count, "image")): \(each.joined(separator: "; ")).")
        }
        let documents = attachments.compactMap { attachment -> String? in
            guard case .document(let filename, let mediaType, let text) = attachment else { return nil }
            return "\(filename) (\(mediaType), \(text.count.groupedDigits) characters)"
        }
        if !documents.isEmpty {
            sentences.append("I read \(counted(documents.count, "document")): \(documents.joined(separator: "; ")).")
        }
        return sentences.isEmpty ? nil : sentences.joined(separator: " ")
    }

    private static func counted(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }
}
