import Foundation
import ParleyAPI
import ParleyEvents
import ParleyFiles
import ParleyHTTP
import ParleyMarkdown
import ParleyQuotas
import ParleyStore
import Synchronization

/// Module ParleyTransfer: conversations out of and into Parley as documents. It must never know
/// live replies: only what the store holds is exported.
///
/// Export and import (docs/api.md "Export and import"): one conversation as JSON (the whole tree) or
/// Markdown (the current branch), all of the caller's conversations as one streamed JSON document,
/// and import of either JSON document as new conversations of the caller.
package struct ExportHandlers: Sendable {
    let store: Store
    let rules: FieldRules
    let access: ModelAccess
    let renderer: MarkdownRenderer
    /// Tells the caller's tabs of the conversations an import made.
    let feed: UserEventFeed
    /// Bounds the caller's concurrent `GET /api/export`s, and cuts one whose credential ends.
    let streams: OpenStreams
    /// The attachment bytes one JSON export may embed (PARLEY_EXPORT_MAX_ATTACHMENT_BYTES): past it a
    /// 413 that names `?attachments=omit`, before the first byte, rather than a body cut off midway.
    let maxAttachmentBytes: Int64
    /// Imports' files: checked exactly as uploads are.
    let ingest: FileIngest

    package init(store: Store, rules: FieldRules, access: ModelAccess, renderer: MarkdownRenderer, feed: UserEventFeed,
                 streams: OpenStreams, maxAttachmentBytes: Int64, ingest: FileIngest) {
        self.maxAttachmentBytes = maxAttachmentBytes
        self.ingest = ingest
        self.store = store
        self.rules = rules
        self.access = access
        self.renderer = renderer
        self.feed = feed
        self.streams = streams
    }

    /// Conversations read per store call while streaming `GET /api/export`.
    static let exportBatch = 50

    /// `GET /api/conversations/{id}/export?format=json|md`, the file named after the title (`ExportFilename`).
    package func exportConversation(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let id = try request.parameter("id")
        let format = request.query["format"] ?? "json"
        guard format == "json" || format == "md" else {
            throw HTTPError(status: 400, code: "invalid_request", message: "'format' must be json or md.")
        }
        guard let archive = try store.archive(conversationID: id, ownedBy: caller.userID) else {
            throw APIErrors.conversationNotFound
        }
        if format == "md" {
            let branch = try store.currentBranch(conversationID: id).map(\.message)
            let text = MarkdownExport.document(archive.conversation, branch: branch)
            let name = ExportFilename(title: archive.conversation.title, id: id, fileExtension: "md")
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/markdown; charset=utf-8"),
                                                       ("Content-Disposition", name.contentDisposition)],
                                body: .bytes(Array(text.utf8)))
        }
        let embed = try Self.embedsAttachments(request)
        let files = try store.messageFiles(messageIDs: archive.messages.map(\.id))
        if embed {
            let total = ConversationPieces.files(of: archive, messageFiles: files).reduce(Int64(0)) { $0 + $1.bytes }
            try checkAttachmentBytes(total)
        }
        let pieces = Mutex(try ConversationPieces(archive: archive, messageFiles: files, standalone: true, embed: embed,
                                                  store: store, owner: caller.userID))
        let name = ExportFilename(title: archive.conversation.title, id: id, fileExtension: "json")
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json; charset=utf-8"),
                                                   ("Content-Disposition", name.contentDisposition)],
                            body: .pulled { try pieces.withLock { try $0.next() } })
    }

    /// `GET /api/export`: `{"parley_export":1,"conversations":[...]}`, written one conversation at a
    /// time as the client reads (never the whole document in memory). Each conversation is read in
    /// its own transaction, so one changed during the export is exported whole, before or after.
    /// At most PARLEY_MAX_EXPORTS_PER_USER run at once (429 `too_many_exports`).
    package func exportAll(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let embed = try Self.embedsAttachments(request)
        if embed { try checkAttachmentBytes(try store.attachedFileBytes(ownedBy: caller.userID)) }
        let ticket = try streams.admit(caller, .export)
        let cursor = ExportCursor(store: store, owner: caller.userID, batch: Self.exportBatch, ticket: ticket,
                                  embed: embed)
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json; charset=utf-8"),
                                                   ("Content-Disposition", "attachment; filename=\"parley-export.json\"")],
                            body: .pulled { try cursor.next() })
    }

    /// `?attachments=omit`: files by id only; absent or `embed`: with their bytes.
    private static func embedsAttachments(_ request: HTTPRequest) throws(HTTPError) -> Bool {
        switch request.query["attachments"] {
        case nil, "embed": return true
        case "omit": return false
        default: throw HTTPError(status: 400, code: "invalid_request", message: "'attachments' must be embed or omit.")
        }
    }

    /// 413 `export_too_large` when the files to embed pass the export limit.
    private func checkAttachmentBytes(_ total: Int64) throws(HTTPError) {
        guard total > maxAttachmentBytes else { return }
        throw HTTPError(status: 413, code: "export_too_large",
                        message: "The attachments take \(total) bytes, more than an export embeds "
                            + "(\(maxAttachmentBytes)): export with ?attachments=omit to refer to them by id.")
    }
}

/// The answer to an import: the new conversations, in the document's order.
struct ImportResource: Encodable {
    let items: [ConversationResource]
}
