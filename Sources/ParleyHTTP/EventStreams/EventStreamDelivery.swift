extension EventStreamWriter {
    /// Where one event stream's body is in its life: the phases, and every allowed move between them.
    ///
    /// Why: the writer kept this in four flags (`handedOff`, `suspended`, `socket`, `awaitingWritable`)
    /// read in a fixed order, so which combinations could happen was only known from the call order.
    /// Here each case is a real phase, and the moves below are the only code that changes it; a move
    /// asked for in a phase that does not allow it changes nothing and says so (it returns false or nil).
    ///
    /// A plain value with no locking: `EventStreamWriter` owns one under its mutex and does what a move
    /// implies (suspending or resuming the libmicrohttpd connection, the socket loop's calls) under it too.
    enum Delivery: Equatable {
        /// Whether the producer may still write.
        enum Intake: Equatable {
            case open
            /// `finish()` was called: what is queued is sent, then the response ends.
            case finishing
        }

        /// How libmicrohttpd ends the response at its next call for body bytes.
        enum Ending: Equatable {
            /// Every byte was sent: it writes the last chunk and keeps the connection alive.
            case drained
            /// Bytes were dropped (overflow, eviction, client gone, forced shutdown): it closes the connection.
            case dropped
        }

        /// libmicrohttpd is sending the headers and holds the connection; writes queue until its first
        /// call for body bytes hands the socket over.
        case awaitingHandOff(Intake)
        /// The connection is suspended and the loop watches its socket, which took every byte sent so
        /// far: a write is sent from the producer's thread.
        case writing(socket: Int32, Intake)
        /// The socket's send buffer is full: bytes wait until the loop reports it writable.
        case awaitingWritable(socket: Int32, Intake)
        /// libmicrohttpd holds the connection (given back resumed, or never handed over) and ends the
        /// response at its next call.
        case ending(Ending)
        /// The response ended, or the connection is gone: nothing is sent and nothing is touched again.
        case finished

        /// The producer may write.
        var acceptsWrites: Bool { intake == .open }

        /// The socket while the loop watches it.
        var socket: Int32? {
            switch self {
            case .writing(let socket, _), .awaitingWritable(let socket, _): socket
            case .awaitingHandOff, .ending, .finished: nil
            }
        }

        /// The producer's side while the stream is live (before it ends).
        private var intake: Intake? {
            switch self {
            case .awaitingHandOff(let intake), .writing(_, let intake), .awaitingWritable(_, let intake): intake
            case .ending, .finished: nil
            }
        }

        // MARK: - Moves

        /// The producer calls `finish()`: no more writes; the phase is kept. False when it had already
        /// finished or the stream ended.
        mutating func finish() -> Bool {
            switch self {
            case .awaitingHandOff(.open): self = .awaitingHandOff(.finishing)
            case .writing(let socket, .open): self = .writing(socket: socket, .finishing)
            case .awaitingWritable(let socket, .open): self = .awaitingWritable(socket: socket, .finishing)
            default: return false
            }
            return true
        }

        /// libmicrohttpd asked for the first body bytes (its headers are out): the socket is the loop's now.
        mutating func handOff(socket: Int32) -> Bool {
            guard case .awaitingHandOff(let intake) = self else { return false }
            self = .writing(socket: socket, intake)
            return true
        }

        /// The socket took fewer bytes than offered.
        mutating func socketFull() -> Bool {
            guard case .writing(let socket, let intake) = self else { return false }
            self = .awaitingWritable(socket: socket, intake)
            return true
        }

        /// The loop reports the socket can take more.
        mutating func socketWritable(_ reported: Int32) -> Bool {
            guard case .awaitingWritable(let socket, let intake) = self, socket == reported else { return false }
            self = .writing(socket: socket, intake)
            return true
        }

        /// A finishing stream sent its last byte: the connection goes back to libmicrohttpd, which ends
        /// the response. Returns the socket the loop must forget.
        mutating func drained() -> Int32? {
            guard case .writing(let socket, .finishing) = self else { return nil }
            self = .ending(.drained)
            return socket
        }

        /// The stream is closed abruptly. Returns the phase it left (the caller forgets a watched socket
        /// and resumes the connection); nil when it had already ended.
        mutating func drop() -> Delivery? {
            switch self {
            case .awaitingHandOff, .writing, .awaitingWritable:
                defer { self = .ending(.dropped) }
                return self
            case .ending, .finished:
                return nil
            }
        }

        /// libmicrohttpd's reader ended the response. Returns how.
        mutating func ended() -> Ending? {
            guard case .ending(let ending) = self else { return nil }
            self = .finished
            return ending
        }

        /// The connection or its response is gone (libmicrohttpd says so, whatever the phase). Returns
        /// the phase it left.
        mutating func connectionGone() -> Delivery {
            defer { self = .finished }
            return self
        }
    }
}
