import CMicroHTTPD
import Dispatch
import Synchronization

/// The producer's end of one streaming (chunked) response, typically Server-Sent Events.
///
/// Thread-safe: `write`, `finish` and `onClose` may be called from any thread or task. Bytes are buffered
/// until the connection's thread sends them; at most `HTTPServerConfiguration.streamBacklogLimit` unsent
/// bytes are kept, past that the stream is closed (a client that does not read must not grow memory).
/// `onClose` handlers run exactly once, when the stream ends for any reason: drained after `finish()`,
/// client gone, backlog exceeded, or server shutdown.
public final class EventStreamWriter: Sendable {
    private enum Phase {
        case open
        /// `finish()` was called: drain the buffer, then end the chunked body.
        case finishing
        /// Closed abruptly (backlog overflow, forced shutdown): the connection is dropped.
        case aborted
        case closed
    }

    private struct State {
        var buffer: [UInt8] = []
        var readOffset = 0
        var connection: ConnectionHandle?
        /// True while the connection is suspended by the content reader waiting for bytes.
        var suspended = false
        var phase = Phase.open
        var closeHandlers: [@Sendable () -> Void] = []
        var closeFired = false
        var lastWriteNanos = DispatchTime.now().uptimeNanoseconds
        var unsent: Int { buffer.count - readOffset }
    }

    private let backlogLimit: Int
    private let state = Mutex(State())
    /// Told once when the stream ends, so the server can forget it.
    private let ended: @Sendable (EventStreamWriter) -> Void

    init(backlogLimit: Int, ended: @escaping @Sendable (EventStreamWriter) -> Void) {
        self.backlogLimit = backlogLimit
        self.ended = ended
    }

    // MARK: - Producer side

    /// Queues bytes for sending. Returns false (and drops the bytes) once the stream is closed or finishing,
    /// or when these bytes would push the unsent backlog past the limit, which closes the stream.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        var fire: [@Sendable () -> Void]?
        let accepted = state.withLock { state -> Bool in
            guard state.phase == .open else { return false }
            if state.unsent + bytes.count > backlogLimit {
                state.phase = .aborted
                // A client that does not read may keep the socket until the connection timeout:
                // at least the backlog is freed now.
                state.buffer = []
                state.readOffset = 0
                EventStreamWriter.wake(&state)
                fire = EventStreamWriter.takeCloseHandlers(&state)
                return false
            }
            state.buffer.append(contentsOf: bytes)
            state.lastWriteNanos = DispatchTime.now().uptimeNanoseconds
            EventStreamWriter.wake(&state)
            return true
        }
        if let fire { runClose(fire) }
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

    /// libmicrohttpd's content reader: copies buffered bytes, or suspends the connection until a producer
    /// wakes it (returning 0 without suspending would make MHD poll the reader in a busy loop).
    func read(into destination: UnsafeMutablePointer<CChar>, maximum: Int) -> Int {
        var fire: [@Sendable () -> Void]?
        let result = state.withLock { state -> Int in
            if state.phase == .aborted || state.phase == .closed { return EventStreamWriter.endWithError }
            let count = min(state.unsent, maximum)
            if count > 0 {
                state.buffer.withUnsafeBytes { bytes in
                    UnsafeMutableRawPointer(destination).copyMemory(
                        from: bytes.baseAddress! + state.readOffset, byteCount: count)
                }
                state.readOffset += count
                if state.readOffset == state.buffer.count {
                    state.buffer.removeAll(keepingCapacity: state.buffer.capacity <= 64 * 1024)
                    state.readOffset = 0
                } else if state.readOffset > 64 * 1024 {
                    state.buffer.removeFirst(state.readOffset)
                    state.readOffset = 0
                }
                return count
            }
            if state.phase == .finishing {
                state.phase = .closed
                state.connection = nil
                fire = EventStreamWriter.takeCloseHandlers(&state)
                return EventStreamWriter.endOfStream
            }
            guard let connection = state.connection else { return EventStreamWriter.endWithError }
            state.suspended = true
            MHD_suspend_connection(connection.raw)
            return 0
        }
        if let fire { runClose(fire) }
        return result
    }

    /// The connection or response is gone: never touch the connection again.
    func connectionEnded() {
        var fire: [@Sendable () -> Void]?
        state.withLock { state in
            state.connection = nil
            state.suspended = false
            if state.phase != .closed { state.phase = .closed }
            fire = EventStreamWriter.takeCloseHandlers(&state)
        }
        if let fire { runClose(fire) }
    }

    /// Sends `: ping` if nothing was written for `interval` nanoseconds.
    func heartbeat(now: UInt64, idleNanos: UInt64) {
        let idle = state.withLock { state in
            // A write after the timer read `now` is newer than `now`: not idle (no wrapping subtraction).
            state.phase == .open && now > state.lastWriteNanos && now - state.lastWriteNanos >= idleNanos
        }
        if idle { write(EventStreamWriter.ping) }
    }

    /// Shutdown past its grace period: drop the connection even if bytes are unsent.
    func abort() {
        var fire: [@Sendable () -> Void]?
        state.withLock { state in
            guard state.phase == .open || state.phase == .finishing else { return }
            state.phase = .aborted
            state.buffer = []
            state.readOffset = 0
            EventStreamWriter.wake(&state)
            fire = EventStreamWriter.takeCloseHandlers(&state)
        }
        if let fire { runClose(fire) }
    }

    // MARK: - Internals

    static let ping = Array(": ping\n\n".utf8)
    static let endOfStream = -1  // MHD_CONTENT_READER_END_OF_STREAM
    static let endWithError = -2  // MHD_CONTENT_READER_END_WITH_ERROR

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

    private func runClose(_ handlers: [@Sendable () -> Void]) {
        ended(self)
        for handler in handlers { handler() }
    }
}

/// A libmicrohttpd connection pointer that may cross threads: MHD's suspend/resume are thread-safe, and
/// the owner stops using it once the connection is reported gone.
struct ConnectionHandle: @unchecked Sendable {
    let raw: OpaquePointer
}
