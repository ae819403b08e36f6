import ParleyFiles
import ParleyStore

/// The images and files of the user turns a `/v1/chat/completions` call stores, checked before
/// anything is stored or sent: at most PARLEY_MAX_ATTACHMENTS per message; inline bytes by their size
/// and first bytes (`InlineFile`; an `image_url` part must hold an image); a `file_id` must be one of
/// the caller's live files (another user's answers 404, exactly like an unknown one). `fileIDs` then
/// stores the inline ones through `FileIngest`, as uploads of the same bytes (decode and re-encode in
/// the media worker, quota, deduplication), so the model receives them like any attachment.
struct OpenAIAttachments {
    private enum Checked {
        case inline(InlineFile)
        case stored(StoredFile)

        var kind: StoredFile.Kind {
            switch self {
            case .inline(let file): file.kind
            case .stored(let file): file.kind
            }
        }
    }

    /// Per user turn, in order.
    private let turns: [[Checked]]

    /// True when any turn carries an image (only models that see images may get them).
    var hasImages: Bool { turns.contains { $0.contains { $0.kind == .image } } }

    init(_ turns: [[OpenAIFilePart]], owner: String, store: Store, settings: FileSettings) throws {
        self.turns = try turns.map { parts throws -> [Checked] in
            guard parts.count <= settings.maxAttachments else {
                throw OpenAIError(status: 400, message: "A message may carry at most \(settings.maxAttachments) "
                                    + "images and files (PARLEY_MAX_ATTACHMENTS).",
                                  kind: .invalidRequest, param: "messages", code: "too_many_attachments")
            }
            return try parts.map { part throws -> Checked in
                switch part {
                case .stored(let id):
                    guard let file = try store.liveFiles(ids: [id], ownedBy: owner).first else {
                        throw StoreError.notFound(.file(id: id))
                    }
                    return .stored(file)
                case .inline(let bytes, let filename, let image):
                    let file = try InlineFile(bytes: bytes, filename: filename, settings: settings)
                    if image, file.kind != .image {
                        throw OpenAIError(status: 400, message: "An image_url part must hold a PNG, JPEG, GIF or WebP "
                                            + "image; send documents as file parts.",
                                          kind: .invalidRequest, param: "messages", code: "invalid_image")
                    }
                    return .inline(file)
                }
            }
        }
    }

    /// What `store` stored: every turn's file ids, in order (a file given twice in one message is
    /// attached once), and the files it created (not those the caller already had).
    struct Stored {
        var fileIDs: [[String]] = []
        var created: [String] = []
    }

    /// Stores the inline files for `owner`. When one is refused (the media worker finds it broken, the
    /// quota is reached), the files this call created are removed again: a refused call stores nothing.
    func store(ingest: FileIngest, owner: String, in store: Store) async throws -> Stored {
        var stored = Stored()
        do {
            for turn in turns {
                var ids: [String] = []
                for file in turn {
                    let id: String
                    switch file {
                    case .inline(let inline):
                        let outcome = try await ingest.ingest(inline, owner: owner)
                        if case .created = outcome { stored.created.append(outcome.file.id) }
                        id = outcome.file.id
                    case .stored(let file):
                        id = file.id
                    }
                    if !ids.contains(id) { ids.append(id) }
                }
                stored.fileIDs.append(ids)
            }
        } catch {
            Self.remove(stored.created, owner: owner, from: store)
            throw error
        }
        return stored
    }

    /// Removes files this call created (once nothing shows them); best effort, as a refusal is already
    /// on its way. A file removed is gone from the caller's files.
    static func remove(_ created: [String], owner: String, from store: Store) {
        for id in created { _ = try? store.deleteFile(id: id, ownedBy: owner) }
    }
}
