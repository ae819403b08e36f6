import ParleyAPI
import ParleyStore
import Synchronization

/// The producer of `GET /api/export`'s body: each call gives the next piece (the opening, one
/// conversation, the end), reading the store a page of ids and one conversation at a time, so
/// memory holds one conversation whatever the history's size. Thread-safe (the HTTP layer calls it
/// from its worker threads, one call at a time).
///
/// It holds the export's `StreamTicket`: once the credential it was opened with ends, the next piece
/// throws (the client sees the chunked body cut off); at the document's end the slot is freed.
final class ExportCursor: Sendable {
    private struct State {
        var started = false
        var finished = false
        var keys: [ExportKey] = []
        var last: ExportKey?
        var exhausted = false
        var written = 0
        /// The conversation being written, a piece at a time.
        var current: ConversationPieces?
    }

    private let store: Store
    private let owner: String
    private let batch: Int
    private let ticket: StreamTicket
    /// Whether files carry their bytes (false: `?attachments=omit`).
    private let embed: Bool
    private let state = Mutex(State())

    init(store: Store, owner: String, batch: Int, ticket: StreamTicket, embed: Bool) {
        self.store = store
        self.owner = owner
        self.batch = batch
        self.ticket = ticket
        self.embed = embed
    }

    /// The next bytes of the document, nil after its end.
    func next() throws -> [UInt8]? {
        try state.withLock { state throws -> [UInt8]? in
            if state.finished { return nil }
            if ticket.isRevoked {
                state.finished = true
                throw APIErrors.unauthenticated
            }
            if !state.started {
                state.started = true
                return Array("{\"parley_export\":\(ConversationExport.version),\"conversations\":[".utf8)
            }
            while true {
                if var current = state.current {
                    if let piece = try current.next() {
                        state.current = current
                        return piece
                    }
                    state.current = nil
                }
                if state.keys.isEmpty {
                    if !state.exhausted {
                        state.keys = try store.conversationKeys(ownedBy: owner, after: state.last, limit: batch)
                        state.exhausted = state.keys.count < batch
                        state.last = state.keys.last ?? state.last
                    }
                    if state.keys.isEmpty {
                        state.finished = true
                        ticket.release()
                        return Array("]}".utf8)
                    }
                }
                let id = state.keys.removeFirst().id
                // Deleted since its id was read: left out.
                guard let archive = try store.archive(conversationID: id, ownedBy: owner) else { continue }
                let files = try store.messageFiles(messageIDs: archive.messages.map(\.id))
                state.current = try ConversationPieces(archive: archive, messageFiles: files, standalone: false,
                                                       embed: embed, store: store, owner: owner)
                if state.written > 0 {
                    state.written += 1
                    return [UInt8(ascii: ",")]
                }
                state.written += 1
            }
        }
    }
}
