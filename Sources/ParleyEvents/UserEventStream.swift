import ParleyGeneration
import ParleyHTTP
import ParleyOutcome
import Synchronization

/// One tab's connection to `GET /api/events`: the user's notifications and, when the tab follows a
/// reply, that reply's events, written to one `EventStreamWriter`, each with the stream's position as
/// its `id:` (`UserEventID`), so one Last-Event-ID resumes both without a gap or a duplicate.
///
/// Concurrency contract: thread-safe. Notifications arrive under their channel's lock, reply events
/// on the reply's generation actor; every write, and the position it advances, happens under this
/// stream's mutex, so ids and bytes go out in the same order. Lock order: channel, then stream, then
/// the writer's own. Nothing here waits: a write only queues bytes (a client that does not read is
/// closed by the writer's backlog limit).
final class UserEventStream: Sendable {
    /// How a connection begins, decided by the channel from the client's Last-Event-ID.
    enum Start: Sendable {
        /// No Last-Event-ID: notifications from now on.
        case fresh
        /// The notifications the client missed, in order (possibly none).
        case replay([UserEventLog.Entry])
        /// The client's id is older than the log holds, or from another run: it must reload its lists.
        case resync
    }

    let writer: EventStreamWriter
    private let encoder: EventStreamEncoder
    private let snapshotFrames: SnapshotFrameCache
    private let position: Mutex<UserEventID>

    static let readyFrame = Array("event: ready\ndata: {}\n\n".utf8)
    static let resyncFrame = Array("event: resync\ndata: {}\n\n".utf8)

    init(writer: EventStreamWriter, encoder: EventStreamEncoder, snapshotFrames: SnapshotFrameCache,
         position: UserEventID) {
        self.writer = writer
        self.encoder = encoder
        self.snapshotFrames = snapshotFrames
        self.position = Mutex(position)
    }

    /// The followed reply's part of the position (where its subscription starts).
    var reply: UserEventID.Reply { position.withLock { $0.reply } }

    // MARK: - Notifications (called under the channel's lock)

    /// Writes what the connection begins with, then `ready`: every connection gets `ready` once its
    /// notifications are live, so a client (or a test) knows nothing published afterwards is missed.
    func begin(_ start: Start, lastID: Int64) {
        position.withLock { position in
            var pieces: [[UInt8]] = []
            switch start {
            case .fresh:
                position.notification = lastID
            case .replay(let entries):
                for entry in entries {
                    position.notification = entry.id
                    pieces.append(Self.idLine(position))
                    pieces.append(entry.frame)
                }
            case .resync:
                position.notification = lastID
                pieces.append(Self.idLine(position))
                pieces.append(Self.resyncFrame)
            }
            pieces.append(Self.idLine(position))
            pieces.append(Self.readyFrame)
            writer.write(contentsOf: pieces)
        }
    }

    /// A live notification; one already delivered (replayed as the stream began) is skipped.
    func notify(_ entry: UserEventLog.Entry) {
        position.withLock { position in
            guard entry.id > position.notification else { return }
            position.notification = entry.id
            writer.write(contentsOf: [Self.idLine(position), entry.frame])
        }
    }

    // MARK: - The followed reply (called on its generation's actor)

    /// Writes a batch of the reply's events; returns whether more are wanted (false after `done`, or
    /// once the stream is closed), which ends the subscription.
    func deliver(_ events: [GenerationEvent]) -> Bool {
        position.withLock { position in
            guard position.reply != .done, !writer.isClosed else { return false }
            let pieces = encoder.pieces(events, sharing: snapshotFrames) { event in
                position.reply = event.isDone ? .done : .at(event.id)
                return position.text
            }
            if !pieces.isEmpty, !writer.write(contentsOf: pieces) { return false }
            return position.reply != .done
        }
    }

    /// The followed reply cannot be read (its message was deleted): one `error`, and the reply's part
    /// of the position becomes `done`, so a reconnect does not ask for it again.
    func replyFailed(code: ReplyErrorCode, message: String) {
        position.withLock { position in
            guard position.reply != .done else { return }
            position.reply = .done
            let id = position.text
            writer.write(encoder.encode([.failure(code: code, message: message)]) { _ in id })
        }
    }

    private static func idLine(_ position: UserEventID) -> [UInt8] {
        Array("id: \(position.text)\n".utf8)
    }
}
