import Dispatch
import Synchronization

/// The producer's end of one streaming (chunked) response, typically Server-Sent Events.
///
/// Thread-safe: `write`, `finish` and `onClose` may be called from any thread or task. Bytes are queued,
/// as the arrays written (shared, not copied: see `PendingBytes`), until they are sent. At most
/// `HTTPServerConfiguration.streamBacklogLimit` unsent bytes are kept per stream, and the server's
/// `StreamBacklogBudget` bounds all streams together; past either the stream is closed (a client that
/// does not read must not grow memory). `onClose` handlers run exactly once, when the stream ends for
/// any reason: drained after `finish()`, client gone, backlog or budget exceeded, or server shutdown.
///
/// Delivery (`Delivery` holds the phases and their moves): at libmicrohttpd's first call for body bytes
/// (the headers are sent by then) the connection is suspended once and its socket handed to the
/// server's `StreamSocketLoop` (`EventStreamWriter+ContentReader.swift`). From then on bytes are sent to
/// the socket directly, from the producer's thread, framed as HTTP/1.1 chunks when the request was
/// HTTP/1.1 (as libmicrohttpd would have); a full socket is finished by the loop when it can take more
/// (`EventStreamWriter+Socket.swift`). When the stream ends the connection is resumed and
/// libmicrohttpd writes the last chunk (or closes it).
///
/// Locks: the writer's mutex, then (inside it) the budget's leaf lock and the loop's map. Close
/// handlers, the closing of streams the budget evicts and the memory trimmer run after the mutex is
/// released; socket writes, `MHD_resume_connection`/`MHD_suspend_connection` run under it, so a socket
/// is never written after it was handed back.
public final class EventStreamWriter: Sendable {
    /// Everything under the mutex. Only the writer's own files touch it.
    struct State {
        var delivery = Delivery.awaitingHandOff(.open)
        var pending = PendingBytes()
        /// Bytes being sent to the socket: framed (chunk header and trailer), front partly sent.
        var outgoing = PendingBytes()
        /// nil once they ran (they run once).
        var closeHandlers: [@Sendable () -> Void]? = []
        var lastWriteNanos = DispatchTime.now().uptimeNanoseconds
    }

    /// What a locked step leaves to do once the mutex is released.
    struct Aftermath {
        var closeHandlers: [@Sendable () -> Void]?
        /// Other streams the budget evicted: they are aborted.
        var evicted: [EventStreamWriter] = []
        /// Bytes freed at once, for the memory trimmer.
        var released = 0
    }

    let backlogLimit: Int
    /// Frame the body as HTTP/1.1 chunks (the request was HTTP/1.1; libmicrohttpd sends HTTP/1.0
    /// bodies unframed and closes the connection after them).
    let chunked: Bool
    let connection: StreamConnection
    let sockets: StreamSocketLoop
    let budget: StreamBacklogBudget<EventStreamWriter>?
    let trimmer: MemoryTrimmer?
    let state = Mutex(State())
    /// Told once when the stream ends, so the server can forget it.
    private let ended: @Sendable (EventStreamWriter) -> Void

    init(connection: StreamConnection, sockets: StreamSocketLoop, backlogLimit: Int, chunked: Bool = true,
         budget: StreamBacklogBudget<EventStreamWriter>? = nil, trimmer: MemoryTrimmer? = nil,
         ended: @escaping @Sendable (EventStreamWriter) -> Void) {
        self.connection = connection
        self.sockets = sockets
        self.backlogLimit = backlogLimit
        self.chunked = chunked
        self.budget = budget
        self.trimmer = trimmer
        self.ended = ended
        budget?.admit(self)
    }

    // MARK: - Producer side

    /// Queues bytes for sending. Returns false (and drops the bytes) once the stream is closed or finishing,
    /// or when these bytes would push the unsent backlog past the limit, which closes the stream.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        write(contentsOf: [bytes])
    }

    /// Queues `pieces` in order, all or none, as `write(_:)` does. The arrays are kept, not copied: an
    /// array written to many streams (a shared snapshot) is held once however many streams queue it.
    @discardableResult
    public func write(contentsOf pieces: [[UInt8]]) -> Bool {
        let size = pieces.reduce(0) { $0 + $1.count }
        var after = Aftermath()
        let accepted = state.withLock { state -> Bool in
            guard state.delivery.acceptsWrites else { return false }
            if state.pending.count + state.outgoing.count + size > backlogLimit {
                // A client that does not read may keep the socket until the connection timeout:
                // at least the backlog is freed now.
                drop(&state, into: &after)
                return false
            }
            for piece in pieces { state.pending.append(piece) }
            state.lastWriteNanos = DispatchTime.now().uptimeNanoseconds
            if charge(&state, into: &after) { return false }
            // Before the hand-off the bytes wait for it; with a full socket, for the loop.
            send(&state, into: &after)
            return true
        }
        settle(after)
        return accepted
    }

    /// Convenience for UTF-8 text.
    @discardableResult
    public func write(_ text: String) -> Bool {
        write(Array(text.utf8))
    }

    /// Ends the stream after the buffered bytes are sent. Later writes return false.
    public func finish() {
        var after = Aftermath()
        state.withLock { state in
            guard state.delivery.finish() else { return }
            send(&state, into: &after)  // hands the connection back at once when nothing is left
        }
        settle(after)
    }

    /// True once the stream accepts no more bytes (finishing, finished, client gone or overflowed).
    public var isClosed: Bool {
        state.withLock { !$0.delivery.acceptsWrites }
    }

    /// Registers a handler run once when the stream ends; runs at once if it already has.
    public func onClose(_ handler: @Sendable @escaping () -> Void) {
        let runNow = state.withLock { state -> Bool in
            guard state.closeHandlers != nil else { return true }
            state.closeHandlers?.append(handler)
            return false
        }
        if runNow { handler() }
    }

    // MARK: - Server side

    /// Unsent bytes held (for tests).
    var unsent: Int {
        state.withLock { $0.pending.count + $0.outgoing.count }
    }

    /// Sends `: ping` if nothing was written for `interval` nanoseconds (the server's heartbeat timer).
    func heartbeat(now: UInt64, idleNanos: UInt64) {
        let idle = state.withLock { state in
            // A write after the timer read `now` is newer than `now`: not idle (no wrapping subtraction).
            state.delivery.acceptsWrites && now > state.lastWriteNanos && now - state.lastWriteNanos >= idleNanos
        }
        if idle { write(EventStreamWriter.ping) }
    }

    /// Drops the connection even if bytes are unsent: shutdown past its grace period, or the budget
    /// evicted this stream.
    func abort() {
        var after = Aftermath()
        state.withLock { drop(&$0, into: &after) }
        settle(after)
    }

    // MARK: - Internals

    static let ping = Array(": ping\n\n".utf8)

    /// Tells the budget the new backlog. Returns true when this stream was evicted (it is then dropped);
    /// other evicted streams are left in `after` to abort once the mutex is released.
    func charge(_ state: inout State, into after: inout Aftermath) -> Bool {
        guard let budget else { return false }
        var evicted = budget.update(self, unsent: state.pending.count + state.outgoing.count)
        guard let mine = evicted.firstIndex(where: { $0 === self }) else {
            after.evicted = evicted
            return false
        }
        evicted.remove(at: mine)
        after.evicted = evicted
        drop(&state, into: &after)
        return true
    }

    /// Closes abruptly under the mutex (nothing when the stream already ended): frees the backlog,
    /// leaves the budget, gives a handed-off connection back so libmicrohttpd closes it, and takes
    /// the close handlers.
    func drop(_ state: inout State, into after: inout Aftermath) {
        guard let left = state.delivery.drop() else { return }
        after.released += state.pending.count + state.outgoing.count
        state.pending = PendingBytes()
        state.outgoing = PendingBytes()
        budget?.remove(self)
        if let socket = left.socket { handBack(socket) }
        after.closeHandlers = Self.takeCloseHandlers(&state)
    }

    /// The part of a step that must not run under the mutex.
    func settle(_ after: Aftermath) {
        if let handlers = after.closeHandlers {
            ended(self)
            for handler in handlers { handler() }
        }
        for stream in after.evicted { stream.abort() }
        trimmer?.released(after.released)
    }

    static func takeCloseHandlers(_ state: inout State) -> [@Sendable () -> Void]? {
        defer { state.closeHandlers = nil }
        return state.closeHandlers
    }
}
