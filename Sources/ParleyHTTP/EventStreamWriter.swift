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
/// Locks: the writer's mutex, then (inside it) the budget's leaf lock. Close handlers, the closing of
/// streams the budget evicts and the memory trimmer run after the mutex is released; only
/// `MHD_resume_connection`/`MHD_suspend_connection` run under it, so a reader cannot suspend between a
/// producer's append and its wake-up.
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
    private let budget: StreamBacklogBudget<EventStreamWriter>?
    private let trimmer: MemoryTrimmer?
    private let state = Mutex(State())
    /// Told once when the stream ends, so the server can forget it.
    private let ended: @Sendable (EventStreamWriter) -> Void

    init(backlogLimit: Int, budget: StreamBacklogBudget<EventStreamWriter>? = nil, trimmer: MemoryTrimmer? = nil,
         ended: @escaping @Sendable (EventStreamWriter) -> Void) {
        self.backlogLimit = backlogLimit
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
            if state.pending.count + size > backlogLimit {
                // A client that does not read may keep the socket until the connection timeout:
                // at least the backlog is freed now.
                drop(&state, into: &after)
                return false
            }
            for piece in pieces { state.pending.append(piece) }
            state.lastWriteNanos = DispatchTime.now().uptimeNanoseconds
            if charge(&state, into: &after) { return false }
            EventStreamWriter.wake(&state)
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
        state.withLock { state in
            guard state.phase == .open else { return }
            state.phase = .finishing
            EventStreamWriter.wake(&state)
        }
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
        state.withLock { $0.pending.count }
    }

    /// libmicrohttpd's content reader: copies buffered bytes, or suspends the connection until a producer
    /// wakes it (returning 0 without suspending would make MHD poll the reader in a busy loop).
    func read(into destination: UnsafeMutablePointer<CChar>, maximum: Int) -> Int {
        var after = Aftermath()
        let result = state.withLock { state -> Int in
            if state.phase == .aborted || state.phase == .closed { return EventStreamWriter.endWithError }
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
            state.connection = nil
            state.suspended = false
            if state.phase != .closed { state.phase = .closed }
            after.released = state.pending.count
            state.pending = PendingBytes()
            budget?.remove(self)
            after.closeHandlers = EventStreamWriter.takeCloseHandlers(&state)
        }
        settle(after)
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
    static let endOfStream = -1  // MHD_CONTENT_READER_END_OF_STREAM
    static let endWithError = -2  // MHD_CONTENT_READER_END_WITH_ERROR

    /// Tells the budget the new backlog. Returns true when this stream was evicted (it is then dropped);
    /// other evicted streams are left in `after` to abort once the mutex is released.
    private func charge(_ state: inout State, into after: inout Aftermath) -> Bool {
        guard let budget else { return false }
        var evicted = budget.update(self, unsent: state.pending.count)
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
        after.released += state.pending.count
        state.pending = PendingBytes()
        budget?.remove(self)
        EventStreamWriter.wake(&state)
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
