import Foundation
import ParleyAPI
import ParleyFiles
import ParleyHTTP
import ParleyMedia
import ParleyStore

extension ExportHandlers {
    /// Bytes of the uploaded document read per `JSONEventParser.feed`.
    static let importPiece = 64 * 1024

    /// Headers time of `POST /api/import` (an upload route: the body streams to a temp file). The body
    /// must be declared JSON, as every API body: an HTML form or a `no-cors` fetch cannot send it.
    package func admitImport(_ request: HTTPRequest) throws(HTTPError) {
        let media = request.header("Content-Type")?.split(separator: ";", maxSplits: 1).first?
            .trimmingCharacters(in: .whitespaces).lowercased()
        guard media == "application/json" else {
            throw HTTPError(status: 415, code: "unsupported_media_type",
                            message: "Send the request body as JSON with 'Content-Type: application/json'.")
        }
    }

    /// `POST /api/import`: the document is read piece by piece (`ImportSplitter`: the attachments'
    /// base64 goes to files of their own, the rest stays compact text), checked whole
    /// (`ImportDocument`, then each file exactly as an upload with `.verify`, so its bytes are kept as
    /// given), then the conversations are written with their attachments in one transaction; 201 with
    /// the new conversations. Anything refused refuses the whole import: files stored for it are removed.
    package func importDocument(_ request: HTTPRequest, _ body: UploadedBody, _ caller: Caller) async throws -> HTTPResponse {
        guard body.byteCount > 0 else { throw ImportDocument.invalid("The body is empty: send an export document.") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = body.file
        let limit = max(body.byteCount, 1)
        let split = try await Blocking.run { try Self.split(source, into: directory, maxFileBytes: limit) }
        var document = try ImportDocument(split.text, rules: rules, renderer: renderer, now: Date())
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
        var created: [String] = []
        do {
            for index in document.archives.indices {
                document.archives[index].files = try await storeFiles(
                    document.files[index], split: split.files, caller: caller, created: &created)
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
        } catch {
            for id in created { _ = try? store.deleteFile(id: id, ownedBy: caller.userID) }
            throw error
        }
    }

    /// The document streamed through yajl: its text without the attachments' bytes, and their files.
    private static func split(_ source: URL, into directory: URL, maxFileBytes: Int) throws -> (text: [UInt8], files: [URL]) {
        let splitter = ImportSplitter(directory: directory, maxFileBytes: maxFileBytes)
        let parser = JSONEventParser(maxDepth: 2 * ImportDocument.maxDepth) { try splitter.take($0) }
        let handle = try FileHandle(forReadingFrom: source)
        defer { try? handle.close() }
        do {
            while let piece = try handle.read(upToCount: importPiece), !piece.isEmpty {
                try piece.withUnsafeBytes { try parser.feed($0) }
            }
            try parser.finish()
        } catch JSONEventParser.Failure.syntax(let why) {
            throw ImportDocument.invalid(why)
        } catch JSONEventParser.Failure.tooDeep {
            throw ImportDocument.invalid("The document nests deeper than \(ImportDocument.maxDepth) levels: "
                                         + "it is not a Parley export.")
        } catch ImportSplitter.Failure.notBase64(let place) {
            throw ImportDocument.invalid("\(place): must be the file's bytes in base64.")
        }
        return (splitter.text, splitter.files)
    }

    /// Stores a conversation's embedded files for the caller (each checked as an upload, `.verify`) and
    /// gives what each message shows as stored ids. A file the message names that the document does not
    /// carry (an export made with `?attachments=omit`) is attached only if the caller owns a file of
    /// that id; otherwise the import is refused, naming the place. `created` collects new files, for
    /// removal if the import fails.
    private func storeFiles(
        _ files: ImportFiles, split: [URL], caller: Caller, created: inout [String]
    ) async throws -> [String: [String]] {
        var stored: [String: String] = [:]
        for (place, entry) in files.entries {
            guard let index = try ImportFiles.fileIndex(entry.data, place: place) else { continue }
            guard split.indices.contains(index) else {
                throw ImportDocument.invalid("\(place).data: must be the file's bytes in base64.")
            }
            let filename = ContentDisposition.clean(entry.filename)
            let outcome: FileIngest.Outcome
            do {
                outcome = try await ingest.ingest(split[index], filename: filename.isEmpty ? "file" : filename,
                                                  owner: caller.userID, mode: .verify)
            } catch let error as HTTPError {
                var named = error
                named.message = "\(place): \(error.message)"
                throw named
            }
            if case .created(let file) = outcome { created.append(file.id) }
            stored[entry.id] = outcome.file.id
        }
        var attached: [String: [String]] = [:]
        for reference in files.references {
            var ids: [String] = []
            for (index, id) in reference.fileIDs.enumerated() {
                if let new = stored[id] {
                    ids.append(new)
                } else if (try? store.file(id: id, ownedBy: caller.userID)) != nil {
                    ids.append(id)
                } else {
                    throw ImportDocument.invalid("\(reference.place)[\(index)]: file \(id) is not in the document's "
                                                 + "files (an export with ?attachments=omit) and is not one of yours.")
                }
            }
            attached[reference.messageID] = ids
        }
        return attached
    }
}
