import Foundation
import ParleyAPI
import ParleyHTTP
import ParleyMedia
import ParleyStore
import Synchronization

/// `/api/files`: upload, list, download (whole, a range, or the thumbnail) and delete, each scoped
/// to the caller: another user's file id is 404, exactly like an unknown one.
package struct FileHandlers: Sendable {
    let store: Store
    let ingest: FileIngest

    package init(store: Store, ingest: FileIngest) {
        self.store = store
        self.ingest = ingest
    }

    package var settings: FileSettings { ingest.settings }

    /// What the upload route's `UploadInspector` is: the hash and UTF-8 check made as the body arrives.
    package static let uploadInspector: UploadRoute.Inspector = FileBodyInspector.make

    /// The headers-time check of an upload (before any body byte): the caller's quota against the
    /// declared length. Authentication has been done by the route.
    package func admitUpload(_ request: HTTPRequest, _ caller: Caller) throws {
        if let declared = request.header("Content-Length").flatMap(Int64.init) {
            try ingest.checkQuota(owner: caller.userID, adding: declared - Int64(UploadRoute.multipartAllowance))
        }
    }

    /// `POST /api/files`: 201 with the new file, or 200 with the caller's file of the same bytes.
    package func upload(_ request: HTTPRequest, _ body: UploadedBody, _ caller: Caller) async throws -> HTTPResponse {
        let filename = ContentDisposition.clean(body.filename ?? "")
        let outcome = try await ingest.ingest(body.file, filename: filename.isEmpty ? "file" : filename,
                                              owner: caller.userID, inspection: body.inspection as? UploadInspection)
        switch outcome {
        case .created(let file): return .json(FileResource(file), status: 201)
        case .existing(let file): return .json(FileResource(file), status: 200)
        }
    }

    /// `GET /api/files?limit=&cursor=`: the caller's files, newest first.
    package func list(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let limit = try PageLimit.from(request)
        let page = try store.listFiles(ownedBy: caller.userID, limit: limit, cursor: request.query["cursor"])
        return .json(FilePageResource(items: page.items.map(FileResource.init), nextCursor: page.nextCursor))
    }

    /// `GET /api/files/{id}` (`?variant=thumb`): the stored bytes with their type, inline for images
    /// and as a download otherwise; one `Range` is answered 206. The answer may not run as a page
    /// (`sandbox`), and `nosniff` keeps browsers to the type given.
    package func content(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let file = try store.file(id: try request.parameter("id"), ownedBy: caller.userID)
        let disposition = ContentDisposition(file.kind == .image ? .inline : .attachment, filename: file.filename)
        var headers: [(String, String)] = [
            ("Content-Security-Policy", "default-src 'none'; sandbox"),
            ("Content-Disposition", disposition.value),
        ]
        switch request.query["variant"] {
        case nil:
            break
        case "thumb":
            guard let thumbnail = try store.fileThumbnail(id: file.id, ownedBy: caller.userID) else {
                throw FileErrors.noThumbnail
            }
            headers.append(("Content-Type", thumbnail.mediaType))
            return HTTPResponse(status: 200, headers: headers, body: .bytes(thumbnail.bytes))
        default:
            throw FileErrors.unknownVariant
        }
        headers += [("Content-Type", Self.contentType(file.mediaType)), ("Accept-Ranges", "bytes")]
        let size = Int(file.bytes)
        let range = ByteRange(header: request.header("Range"), size: size)
        if let contentRange = range.contentRange(size: size) { headers.append(("Content-Range", contentRange)) }
        switch range {
        case .unsatisfiable:
            return HTTPResponse(status: 416, headers: headers.filter { $0.0 != "Content-Type" }
                                    + [("Content-Type", "application/json; charset=utf-8")],
                                body: .bytes(Array(#"{"error":{"code":"range_not_satisfiable","message":"The range is past the end of the file."}}"#.utf8)))
        case .whole:
            let reader = ContentPieces(try store.fileContent(id: file.id, ownedBy: caller.userID))
            return HTTPResponse(status: 200, headers: headers, body: .sized(length: size) { try reader.next() })
        case .partial(let bytes):
            let reader = ContentPieces(try store.fileContent(
                id: file.id, ownedBy: caller.userID, range: Int64(bytes.lowerBound)..<Int64(bytes.upperBound)))
            return HTTPResponse(status: 206, headers: headers, body: .sized(length: bytes.count) { try reader.next() })
        }
    }

    /// `DELETE /api/files/{id}`: removed, or kept (hidden, no longer sendable) while messages show it.
    package func delete(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let id = try request.parameter("id")
        switch try store.deleteFile(id: id, ownedBy: caller.userID) {
        case .removed:
            return .json(FileDeletionResource(id: id, deleted: true, keptForMessages: 0, message: "The file was deleted."))
        case .kept(let messages):
            return .json(FileDeletionResource(
                id: id, deleted: false, keptForMessages: messages,
                message: "The file is gone from your files and cannot be sent again, but it is kept until the "
                    + "\(messages) message\(messages == 1 ? "" : "s") showing it \(messages == 1 ? "is" : "are") deleted."))
        }
    }

    /// Text is served as UTF-8 (it was checked as such on upload).
    static func contentType(_ mediaType: String) -> String {
        mediaType.hasPrefix("text/") || mediaType == "application/json" ? mediaType + "; charset=utf-8" : mediaType
    }
}

/// A stored file's reader as a pulled body: each call reads the next chunk (its own short read).
private final class ContentPieces: Sendable {
    private let reader: Mutex<FileContentReader>

    init(_ reader: FileContentReader) {
        self.reader = Mutex(reader)
    }

    func next() throws -> [UInt8]? {
        try reader.withLock { reader throws -> [UInt8]? in try reader.next() }
    }
}
