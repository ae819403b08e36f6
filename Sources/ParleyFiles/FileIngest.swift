import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyMedia
import ParleyStore

/// How a local file becomes a user's stored file: the one path uploads and imports share, so an
/// imported attachment is checked exactly as an upload is.
///
/// Order: hash the bytes as received (the same upload twice is one file: nothing is decoded again),
/// check the user's total, sniff what the file is. A text document (UTF-8 at its start) is checked
/// in this process (`TextCheck`) and stored as it came: no decoder touches it. An image or a PDF goes
/// to `MediaProcessor` (a child process: decoders may crash or hang), whose output is hashed and
/// saved. An upload's hash and UTF-8 check were already made as its bytes arrived
/// (`UploadInspection`); an import's are made here. Hashing, checks and the blob write run off the
/// cooperative pool (`Blocking`), decoding in the child: a flood of uploads never starves a chat.
package struct FileIngest: Sendable {
    /// What became of a file.
    package enum Outcome: Sendable {
        /// Stored now.
        case created(StoredFile)
        /// The user already had these bytes: their file (brought back if they had deleted it).
        case existing(StoredFile)

        package var file: StoredFile {
            switch self {
            case .created(let file), .existing(let file): file
            }
        }
    }

    let store: Store
    let media: MediaProcessor
    package let settings: FileSettings

    package init(store: Store, media: MediaProcessor, settings: FileSettings) {
        self.store = store
        self.media = media
        self.settings = settings
    }

    /// Stores `file` (a local file this call may read but does not remove) for `owner`. `.verify`
    /// (imports) keeps the bytes exactly as given once they pass the checks an upload passes.
    /// `inspection` is what was found while `file` was written (ignored unless its size matches).
    package func ingest(_ file: URL, filename: String, owner: String, mode: MediaMode = .upload,
                        inspection: UploadInspection? = nil) async throws -> Outcome {
        let size = Int64((try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? 0)
        guard size > 0 else { throw FileErrors.http(.empty) }
        let store = store
        let inspection = inspection.flatMap { $0.bytes == size ? $0 : nil }
        let uploadSHA256: String
        if let inspection {
            uploadSHA256 = inspection.sha256
        } else {
            uploadSHA256 = try await Blocking.run { try SHA256Digest.hex(ofFile: file) }
        }
        if let existing = try store.fileForUpload(ownedBy: owner, uploadSHA256: uploadSHA256) {
            return .existing(existing)
        }
        try checkQuota(owner: owner, adding: size)
        let format = try await Blocking.run { () throws -> SniffedFormat in
            do throws(MediaError) {
                return try FileSniffer.sniff(file: file, filename: filename)  // one read of 4 KiB
            } catch {
                throw FileErrors.http(error)
            }
        }
        if case .text(let mediaType) = format {
            return try await saveText(file, filename: filename, mediaType: mediaType, owner: owner,
                                      uploadSHA256: uploadSHA256, inspection: inspection)
        }
        let processed: ProcessedMedia
        do {
            processed = try await media.process(file, filename: filename, mode: mode)
        } catch {
            throw FileErrors.http(error)
        }
        defer { try? FileManager.default.removeItem(at: processed.workDirectory) }
        let content = processed.content
        let storedSHA256 = content.standardizedFileURL == file.standardizedFileURL
            ? uploadSHA256 : try await Blocking.run { try SHA256Digest.hex(ofFile: content) }
        let thumbnail = try processed.thumbnail.map { try Array(Data(contentsOf: $0)) }
        let metadata = FileMetadata(
            ownerID: owner, filename: filename, mediaType: processed.mediaType,
            kind: processed.kind == .image ? .image : .document, sha256: storedSHA256, uploadSHA256: uploadSHA256,
            width: processed.width, height: processed.height, pages: processed.pages,
            textCharacters: processed.textCharacters, note: processed.note,
            thumbnailMediaType: processed.thumbnailMediaType)
        // A text document is its own text: stored once (the content), not twice.
        let text = processed.text.flatMap { $0.standardizedFileURL == content.standardizedFileURL ? nil : $0 }
        let saved = try await Blocking.run {
            try store.saveFile(metadata, content: content, thumbnail: thumbnail, text: text)
        }
        return .created(saved)
    }

    /// A text document: checked here (`TextCheck`), then stored once, as it came (its content is its text).
    private func saveText(_ file: URL, filename: String, mediaType: String, owner: String, uploadSHA256: String,
                          inspection: UploadInspection?) async throws -> Outcome {
        let store = store
        let saved = try await Blocking.run { () throws -> StoredFile in
            let scalars: Int
            do throws(MediaError) {
                scalars = try TextCheck.check(file, mediaType: mediaType, inspection: inspection)
            } catch {
                throw FileErrors.http(error)
            }
            let metadata = FileMetadata(
                ownerID: owner, filename: filename, mediaType: mediaType, kind: .document, sha256: uploadSHA256,
                uploadSHA256: uploadSHA256, width: nil, height: nil, pages: nil, textCharacters: scalars, note: nil,
                thumbnailMediaType: nil)
            return try store.saveFile(metadata, content: file, thumbnail: nil, text: nil)
        }
        return .created(saved)
    }

    /// 413 `quota_exceeded` when `adding` more bytes would take the user past PARLEY_MAX_USER_FILE_BYTES.
    package func checkQuota(owner: String, adding: Int64) throws {
        let used = try store.fileBytes(ownedBy: owner)
        if used + adding > settings.maxUserFileBytes { throw FileErrors.quotaExceeded(limit: settings.maxUserFileBytes) }
    }
}
