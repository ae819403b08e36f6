import ParleyGeneration
import ParleyProviders
import ParleyStore

/// The context builder's files, from the store: a user message's files in the order they were sent,
/// an image as its stored (re-encoded) bytes, a document as its extracted text.
package struct StoredAttachments: AttachmentSource {
    let store: Store

    package init(store: Store) {
        self.store = store
    }

    package func summaries(for message: Message) throws -> [AttachmentSummary] {
        guard message.role == .user else { return [] }
        return try store.messageFiles(messageID: message.id).map { file in
            AttachmentSummary(kind: file.kind == .image ? .image : .document, filename: file.filename,
                              mediaType: file.mediaType,
                              size: file.kind == .image ? Int(file.bytes) : Self.documentCharacters(file))
        }
    }

    package func attachments(for message: Message) throws -> [ChatAttachment] {
        guard message.role == .user else { return [] }
        return try store.messageFiles(messageID: message.id).map { file in
            switch file.kind {
            case .image:
                var reader = try store.fileContent(id: file.id, ownedBy: file.ownerID)
                var bytes: [UInt8] = []
                bytes.reserveCapacity(Int(file.bytes))
                while let chunk = try reader.next() { bytes += chunk }
                return .image(mediaType: file.mediaType, data: bytes)
            case .document:
                // A PDF's extracted text is stored beside it; a text document is its own content.
                var text = try store.fileText(id: file.id, ownedBy: file.ownerID)
                if text == nil, file.mediaType != "application/pdf" {
                    var reader = try store.fileContent(id: file.id, ownedBy: file.ownerID)
                    var bytes: [UInt8] = []
                    while let chunk = try reader.next() { bytes += chunk }
                    text = String(decoding: bytes, as: UTF8.self)
                }
                return .document(filename: file.filename, mediaType: file.mediaType,
                                 text: Self.documentText(file, text: text))
            }
        }
    }

    /// A document's text for the model; a PDF without any says so rather than sending nothing.
    private static func documentText(_ file: StoredFile, text: String?) -> String {
        if let text, !text.isEmpty { return text }
        return placeholder(file)
    }

    /// What `documentText` gives, counted without loading the text.
    private static func documentCharacters(_ file: StoredFile) -> Int {
        if let count = file.textCharacters, count > 0 { return count }
        return placeholder(file).count
    }

    private static func placeholder(_ file: StoredFile) -> String {
        "(\(file.note ?? "no extractable text"))"
    }
}
