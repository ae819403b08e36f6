import CMicroHTTPD
import Dispatch
import Synchronization

/// The producer's end of one streaming (chunked) response, typically Server-Sent Events.
///
/// Thread-safe: `write`, `finish` and `onClose` may be called from any thread or task. Bytes are queued,
/// as the arrays written (shared, not copied: see `PendingBytes`), until the connection's thread sends
/// them. At most `HTTPServerConfiguration.streamBacklogLimit` unsent bytes are kept per stream, and the
/// server's `StreamBacklogBudget` bounds all streams together; past either the stream is closed (a client
/// that does not read must not grow memory). `onClose` handlers run exactly once, when the stream ends
/// for any reason: drained after `finish()`, client gone, backlog or budget exceeded, or server shutdown.
///
/// Delivery: at libmicrohttpd's first call for body bytes (the headers are sent by then) the connection
/// is suspended once and handed to the server's `StreamSocketLoop`. From then on bytes are sent to the
/// socket directly, from the producer's thread, framed as HTTP/1.1 chunks when the request was
/// HTTP/1.1 (as libmicrohttpd would have); a full socket is finished by the loop when it can take
/// more. When the stream ends the connection is resumed and libmicrohttpd writes the last chunk (or
/// closes it). Without a loop (unit tests) the older path remains: suspend when empty, resume per write.
///
/// Locks: the writer's mutex, then (inside it) the budget's leaf lock and the loop's map. Close
/// handlers, the closing of streams the budget evicts and the memory trimmer run after the mutex is
/// released; socket writes, `MHD_resume_connection`/`MHD_suspend_connection` run under it, so a reader
/// cannot suspend between a producer's append and its wake-up, and a socket is never written after
/// it was handed back.
public final class EventStreamWriter: Sendable {
    private enum Phase {
        case open
        /// `finish()` was called: drain the buffer, then end the chunked body.
        case finishing
        /// Closed abruptly (backlog or budget overflow, forced shutdown): the connection is dropped.
        case aborted
        case closed
    }

    private struct State {
        var pending = PendingBytes()
        /// Bytes being sent to the socket: framed (chunk header and trailer), front partly sent.
        var outgoing = PendingBytes()
        /// The socket while the loop holds the connection; nil before the hand-off and after it ends.
        var socket: Int32?
        /// The connection was handed to the loop once (libmicrohttpd's reader then only ends it).
        var handedOff = false
        /// The loop reports when the socket can take more (its send buffer was full).
        var awaitingWritable = false
        var connection: ConnectionHandle?
        /// True while the connection is suspended by the content reader waiting for bytes.
        var suspended = false
        var phase = Phase.open
        var closeHandlers: [@Sendable () -> Void] = []
        var closeFired = false
        var lastWriteNanos = DispatchTime.now().uptimeNanoseconds
    }

    /// What a locked step leaves to do once the mutex is released.
    private struct Aftermath {
        var closeHandlers: [@Sendable () -> Void]?
        /// Other streams the budget evicted: they are aborted.
        var evicted: [EventStreamWriter] = []
        /// Bytes freed at once, for the memory trimmer.
        var released = 0
    }

    private let backlogLimit: Int
    /// Frame the body as HTTP/1.1 chunks (the request was HTTP/1.1; libmicrohttpd sends HTTP/1.0
    /// bodies unframed and closes the connection after them).
    private let chunked: Bool
    private let sockets: StreamSocketLoop?
    private let budget: StreamBacklogBudget<EventStreamWriter>?
    private let trimmer: MemoryTrimmer?
    private let state = Mutex(State())
    /// Told once when the stream ends, so the server can forget it.
    private let ended: @Sendable (EventStreamWriter) -> Void

    init(backlogLimit: Int, chunked: Bool = true, sockets: StreamSocketLoop? = nil,
         budget: StreamBacklogBudget<EventStreamWriter>? = nil, trimmer: MemoryTrimmer? = nil,
         ended: @escaping @Sendable (EventStreamWriter) -> Void) {
        self.backlogLimit = backlogLimit
        self.chunked = chunked
        self.sockets = sockets
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
            guard state.phase == .open else { return false }
            if state.pending.count + state.outgoing.count + size > backlogLimit {
                // A client that does not read may keep the socket until the connection timeout:
                // at least the backlog is freed now.
                drop(&state, into: &after)
                return false
            }
            for piece in pieces { state.pending.append(piece) }
            state.lastWriteNanos = DispatchTime.now().uptimeNanoseconds
            if charge(&state, into: &after) { return false }
            if state.socket != nil {
                send(&state, into: &after)
            } else {
                EventStreamWriter.wake(&state)
            }
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
            guard state.phase == .open else { return }
            state.phase = .finishing
            if state.socket != nil {
                send(&state, into: &after)
            } else {
                EventStreamWriter.wake(&state)
            }
        }
        settle(after)
    }

    /// True once the stream accepts no more bytes (finishing, finished, client gone or overflowed).
    public var isClosed: Bool {
        state.withLock { $0.phase != .open }
    }

    /// Registers a handler run once when the stream ends; runs at once if it already has.
    public func onClose(_ handler: @Sendable @escaping () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.closeFired { return true }
            state.closeHandlers.append(handler)
            return false
        }
        if runNow { handler() }
    }

    // MARK: - Server side

    func attach(_ connection: ConnectionHandle) {
        state.withLock { $0.connection = connection }
    }

    /// Unsent bytes held (for tests).
    var unsent: Int {
        state.withLock { $0.pending.count + $0.outgoing.count }
    }

    /// libmicrohttpd's content reader: copies buffered bytes, or suspends the connection until a producer
    /// wakes it (returning 0 without suspending would make MHD poll the reader in a busy loop).
    func read(into destination: UnsafeMutablePointer<CChar>, maximum: Int) -> Int {
        var after = Aftermath()
        let result = state.withLock { state -> Int in
            if state.phase == .aborted || state.phase == .closed { return EventStreamWriter.endWithError }
            if state.handedOff {
                // Back from the loop, which sent every byte: only the end is left to libmicrohttpd.
                guard state.phase == .finishing, state.socket == nil else { return EventStreamWriter.endWithError }
                state.phase = .closed
                state.connection = nil
                budget?.remove(self)
                after.closeHandlers = EventStreamWriter.takeCloseHandlers(&state)
                return EventStreamWriter.endOfStream
            }
            if let sockets, let connection = state.connection {
                let socket = parley_mhd_connection_fd(connection.raw)
                if socket >= 0 {
                    // The headers are sent (libmicrohttpd asks for body bytes only then): from here the
                    // body goes to the socket directly, and the connection stays suspended until the end.
                    state.handedOff = true
                    state.socket = socket
                    state.suspended = true
                    MHD_suspend_connection(connection.raw)
                    parley_socket_push(socket)
                    sockets.watch(socket, for: self)
                    send(&state, into: &after)
                    return 0
                }
            }
            if !state.pending.isEmpty {
                let (copied, released) = state.pending.read(into: destination, maximum: maximum)
                after.released = released
                if charge(&state, into: &after) { return EventStreamWriter.endWithError }
                return copied
            }
            if state.phase == .finishing {
                state.phase = .closed
                state.connection = nil
                budget?.remove(self)
                after.closeHandlers = EventStreamWriter.takeCloseHandlers(&state)
                return EventStreamWriter.endOfStream
            }
            guard let connection = state.connection else { return EventStreamWriter.endWithError }
            state.suspended = true
            MHD_suspend_connection(connection.raw)
            return 0
        }
        settle(after)
        return result
    }

    /// The connection or response is gone: never touch the connection again.
    func connectionEnded() {
        var after = Aftermath()
        state.withLock { state in
            if let socket = state.socket {
                sockets?.forget(socket)
                state.socket = nil
            }
            state.connection = nil
            state.suspended = false
            if state.phase != .closed { state.phase = .closed }
            after.released = state.pending.count + state.outgoing.count
            state.pending = PendingBytes()
            state.outgoing = PendingBytes()
            budget?.remove(self)
            after.closeHandlers = EventStreamWriter.takeCloseHandlers(&state)
        }
        settle(after)
    }

    // MARK: - Loop side

    /// The socket can take more bytes (the loop thread).
    func socketWritable(_ socket: Int32) {
        var after = Aftermath()
        state.withLock { state in
            // `send` stops the loop's writability reports once everything went out (level-triggered:
            // left on, they would wake the loop over and over).
            guard state.socket == socket else { return }
            send(&state, into: &after)
        }
        settle(after)
    }

    /// The peer may have closed the connection (the loop thread). Checked on the socket itself: the
    /// event may be stale, from an earlier connection that had the same number.
    func socketHungUp(_ socket: Int32) {
        var after = Aftermath()
        state.withLock { state in
            guard state.socket == socket, parley_socket_peer_closed(socket) != 0 else { return }
            guard state.phase == .open || state.phase == .finishing else { return }
            drop(&state, into: &after)
        }
        settle(after)
    }

    /// Sends what is queued, under the mutex, without blocking: frames pending bytes as one chunk,
    /// writes until the socket is full (then the loop reports when it can take more), and hands the
    /// connection back once a finishing stream has sent everything. A send error means the client
    /// is gone.
    private func send(_ state: inout State, into after: inout Aftermath) {
        guard let socket = state.socket else { return }
        var sentAny = false
        while true {
            if state.outgoing.isEmpty {
                guard !state.pending.isEmpty else { break }
                if chunked { state.outgoing.append(Array((String(state.pending.count, radix: 16) + "\r\n").utf8)) }
                state.outgoing.moveAll(from: &state.pending)
                if chunked { state.outgoing.append(EventStreamWriter.crlf) }
            }
            let size = min(state.outgoing.count, EventStreamWriter.sendLimit)
            let written = withUnsafeTemporaryAllocation(byteCount: size, alignment: 1) { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                let copied = state.outgoing.copy(into: base, maximum: size)
                return parley_socket_send(socket, base, copied)
            }
            if written > 0 {
                after.released += state.outgoing.drop(written)
                sentAny = true
                continue
            }
            let error = written < 0 ? parley_errno() : 0
            if error == EINTR { continue }
            if error == EAGAIN || error == EWOULDBLOCK {
                if !state.awaitingWritable {
                    state.awaitingWritable = true
                    sockets?.want(socket, writable: true)
                }
                if sentAny { _ = charge(&state, into: &after) }
                return
            }
            drop(&state, into: &after)
            return
        }
        if state.awaitingWritable {
            state.awaitingWritable = false
            sockets?.want(socket, writable: false)
        }
        if sentAny, charge(&state, into: &after) { return }
        if state.phase == .finishing { handBack(&state) }
    }

    /// Gives the connection back to libmicrohttpd, which ends the response (its reader sees the phase).
    private func handBack(_ state: inout State) {
        guard let socket = state.socket else { return }
        sockets?.forget(socket)
        state.socket = nil
        state.awaitingWritable = false
        EventStreamWriter.wake(&state)
    }

    /// Sends `: ping` if nothing was written for `interval` nanoseconds.
    func heartbeat(now: UInt64, idleNanos: UInt64) {
        let idle = state.withLock { state in
            // A write after the timer read `now` is newer than `now`: not idle (no wrapping subtraction).
            state.phase == .open && now > state.lastWriteNanos && now - state.lastWriteNanos >= idleNanos
        }
        if idle { write(EventStreamWriter.ping) }
    }

    /// Drops the connection even if bytes are unsent: shutdown past its grace period, or the budget
    /// evicted this stream.
    func abort() {
        var after = Aftermath()
        state.withLock { state in
            guard state.phase == .open || state.phase == .finishing else { return }
            drop(&state, into: &after)
        }
        settle(after)
    }

    // MARK: - Internals

    static let ping = Array(": ping\n\n".utf8)
    static let crlf: [UInt8] = [13, 10]
    /// Bytes handed to one send(2): a frame larger than this goes out in several.
    static let sendLimit = 64 * 1024
    static let endOfStream = -1  // MHD_CONTENT_READER_END_OF_STREAM
    static let endWithError = -2  // MHD_CONTENT_READER_END_WITH_ERROR

    /// Tells the budget the new backlog. Returns true when this stream was evicted (it is then dropped);
    /// other evicted streams are left in `after` to abort once the mutex is released.
    private func charge(_ state: inout State, into after: inout Aftermath) -> Bool {
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

    /// Closes abruptly under the mutex: frees the backlog, leaves the budget, wakes the connection so
    /// its reader reports the error, and takes the close handlers.
    private func drop(_ state: inout State, into after: inout Aftermath) {
        state.phase = .aborted
        after.released += state.pending.count + state.outgoing.count
        state.pending = PendingBytes()
        state.outgoing = PendingBytes()
        budget?.remove(self)
        if state.socket != nil {
            handBack(&state)
        } else {
            EventStreamWriter.wake(&state)
        }
        after.closeHandlers = EventStreamWriter.takeCloseHandlers(&state)
    }

    /// The part of a step that must not run under the mutex.
    private func settle(_ after: Aftermath) {
        if let handlers = after.closeHandlers {
            ended(self)
            for handler in handlers { handler() }
        }
        for stream in after.evicted { stream.abort() }
        trimmer?.released(after.released)
    }

    /// Resumes a suspended connection exactly once; called under the lock so a reader cannot suspend
    /// in between.
    private static func wake(_ state: inout State) {
        guard state.suspended, let connection = state.connection else { return }
        state.suspended = false
        MHD_resume_connection(connection.raw)
    }

    private static func takeCloseHandlers(_ state: inout State) -> [@Sendable () -> Void]? {
        guard !state.closeFired else { return nil }
        state.closeFired = true
        defer { state.closeHandlers = [] }
        return state.closeHandlers
    }
}

/// A libmicrohttpd connection pointer that may cross threads: MHD's suspend/resume are thread-safe, and
/// the owner stops using it once the connection is reported gone.
struct ConnectionHandle: @unchecked Sendable {
    let raw: OpaquePointer
}
