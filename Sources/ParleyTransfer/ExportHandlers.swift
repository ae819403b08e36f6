import Foundation
import ParleyAPI
import ParleyEvents
import ParleyHTTP
import ParleyMarkdown
import ParleyQuotas
import ParleyStore

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

    package init(store: Store, rules: FieldRules, access: ModelAccess, renderer: MarkdownRenderer, feed: UserEventFeed, streams: OpenStreams) {
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
        let bytes = try ConversationExport(archive: archive, standalone: true).encoded()
        let name = ExportFilename(title: archive.conversation.title, id: id, fileExtension: "json")
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json; charset=utf-8"),
                                                   ("Content-Disposition", name.contentDisposition)],
                            body: .bytes(bytes))
    }

    /// `GET /api/export`: `{"parley_export":1,"conversations":[...]}`, written one conversation at a
    /// time as the client reads (never the whole document in memory). Each conversation is read in
    /// its own transaction, so one changed during the export is exported whole, before or after.
    /// At most PARLEY_MAX_EXPORTS_PER_USER run at once (429 `too_many_exports`).
    package func exportAll(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let ticket = try streams.admit(caller, .export)
        let cursor = ExportCursor(store: store, owner: caller.userID, batch: Self.exportBatch, ticket: ticket)
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json; charset=utf-8"),
                                                   ("Content-Disposition", "attachment; filename=\"parley-export.json\"")],
                            body: .pulled { try cursor.next() })
    }

    /// `POST /api/import`: the document checked whole (`ImportDocument`, then the store's tree
    /// checks), then written in one transaction; 201 with the new conversations.
    package func importDocument(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        var document = try ImportDocument(request.body, rules: rules, renderer: renderer, now: Date())
        // A model this server does not offer the caller is dropped (the conversation then uses the
        // default); the messages keep the model that wrote them.
        for index in document.archives.indices {
            guard let model = document.archives[index].conversation.model else { continue }
            do {
                _ = try await rules.model(model)
                try await access.require(model, for: caller)
            } catch {
                document.archives[index].conversation.model = nil
            }
        }
        let imported: [Conversation]
        do {
            imported = try store.importConversations(document.archives, ownedBy: caller.userID)
        } catch {
            if case .invalidImport(let why) = error { throw ImportDocument.invalid(why) }
            throw error
        }
        for conversation in imported { feed.conversationCreated(conversation) }
        let usage = try store.usage(conversationIDs: imported.map(\.id))
        return .json(ImportResource(items: imported.map { ConversationResource($0, usage: usage[$0.id] ?? .init()) }),
                     status: 201)
    }
}

/// The answer to an import: the new conversations, in the document's order.
struct ImportResource: Encodable {
    let items: [ConversationResource]
}
