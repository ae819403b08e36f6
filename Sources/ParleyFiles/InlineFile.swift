import Foundation
import ParleyHTTP
import ParleyMedia
import ParleyStore

/// A file a JSON body carried inline (base64 in `/v1/chat/completions`), looked at by its first bytes
/// before anything is stored: so a caller can refuse an image for a model that cannot see it, and a
/// file of the wrong kind or size, with nothing stored. `FileIngest.ingest(_:owner:)` then stores it
/// exactly as an upload (the same decode, re-encode, quota and deduplication).
package struct InlineFile: Sendable {
    package let bytes: Data
    /// The name given, cleaned as an upload's; without one, `image.png`, `document.pdf`, `file.txt`… by kind.
    package let filename: String
    /// What the bytes are (the worker still decodes them on ingest: a broken image is refused then).
    package let kind: StoredFile.Kind

    /// 413 `file_too_large` past PARLEY_MAX_FILE_BYTES; what an upload of these bytes would be refused
    /// for at first sight (empty, SVG, a ZIP, UTF-16 text…) otherwise.
    package init(bytes: Data, filename: String?, settings: FileSettings) throws {
        guard bytes.count <= settings.maxFileBytes else {
            throw HTTPError(status: 413, code: "file_too_large",
                            message: "The file is \(bytes.count) bytes; files may be up to \(settings.maxFileBytes) "
                                + "bytes (PARLEY_MAX_FILE_BYTES).")
        }
        let given = ContentDisposition.clean(filename ?? "")
        let format: SniffedFormat
        do {
            format = try FileSniffer.sniff(head: Array(bytes.prefix(FileSniffer.headLength)),
                                           filename: given.isEmpty ? "file.txt" : given,
                                           complete: bytes.count <= FileSniffer.headLength)
        } catch {
            throw FileErrors.http(error)
        }
        self.bytes = bytes
        self.filename = given.isEmpty ? Self.defaultName(format) : given
        kind = format.kind == .image ? .image : .document
    }

    private static func defaultName(_ format: SniffedFormat) -> String {
        switch format {
        case .png: "image.png"
        case .jpeg: "image.jpg"
        case .gif: "image.gif"
        case .webp: "image.webp"
        case .pdf: "document.pdf"
        case .text: "file.txt"
        }
    }
}

extension FileIngest {
    /// Stores an inline file for `owner` as an upload of its bytes: written to a private temp file
    /// (0600, removed after), then `ingest` (dedupe by hash, quota, decode and re-encode in the worker).
    package func ingest(_ inline: InlineFile, owner: String) async throws -> Outcome {
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("parley-inline-\(UUID().uuidString)")
        let bytes = inline.bytes
        try await Blocking.run {
            guard FileManager.default.createFile(atPath: file.path, contents: bytes,
                                                 attributes: [.posixPermissions: 0o600]) else {
                throw HTTPError.insufficientStorage
            }
        }
        defer { try? FileManager.default.removeItem(at: file) }
        return try await ingest(file, filename: inline.filename, owner: owner)
    }
}
