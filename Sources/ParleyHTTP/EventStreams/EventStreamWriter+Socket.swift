import CMicroHTTPD

/// The socket side of a writer: sending to the socket the loop watches, and what `StreamSocketLoop`
/// reports (writable again, peer gone). Everything here runs under the writer's mutex, or takes it.
extension EventStreamWriter {
    static let crlf: [UInt8] = [13, 10]
    /// Bytes handed to one send(2): a frame larger than this goes out in several.
    static let sendLimit = 64 * 1024

    // MARK: - What the loop calls (its thread)

    /// The socket can take more bytes.
    func socketWritable(_ socket: Int32) {
        var after = Aftermath()
        state.withLock { state in
            guard state.delivery.socketWritable(socket) else { return }
            // Level-triggered: left on, the reports would wake the loop over and over.
            sockets.want(socket, writable: false)
            send(&state, into: &after)
        }
        settle(after)
    }

    /// The peer may have closed the connection. Checked on the socket itself: the event may be stale,
    /// from an earlier connection that had the same number.
    func socketHungUp(_ socket: Int32) {
        var after = Aftermath()
        state.withLock { state in
            guard state.delivery.socket == socket, parley_socket_peer_closed(socket) != 0 else { return }
            drop(&state, into: &after)
        }
        settle(after)
    }

    // MARK: - Sending (under the mutex)

    /// Starts the loop's watch over `socket` (the connection is suspended by now) and sends what is queued.
    func takeSocket(_ socket: Int32, _ state: inout State, into after: inout Aftermath) {
        guard state.delivery.handOff(socket: socket) else { return }
        parley_socket_push(socket)
        sockets.watch(socket, for: self)
        send(&state, into: &after)
    }

    /// Sends what is queued, without blocking, while the socket takes every byte (`.writing`; in any other
    /// phase the bytes wait): frames pending bytes as one chunk, writes until the socket is full (the
    /// loop then reports when it can take more), and hands the connection back once a finishing stream
    /// has sent everything. A send error means the client is gone.
    func send(_ state: inout State, into after: inout Aftermath) {
        guard case .writing(let socket, _) = state.delivery else { return }
        var sentAny = false
        while true {
            if state.outgoing.isEmpty {
                guard !state.pending.isEmpty else { break }
                if chunked { state.outgoing.append(Array((String(state.pending.count, radix: 16) + "\r\n").utf8)) }
                state.outgoing.moveAll(from: &state.pending)
                if chunked { state.outgoing.append(Self.crlf) }
            }
            let size = min(state.outgoing.count, Self.sendLimit)
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
                _ = state.delivery.socketFull()
                sockets.want(socket, writable: true)
                if sentAny { _ = charge(&state, into: &after) }
                return
            }
            drop(&state, into: &after)
            return
        }
        if sentAny, charge(&state, into: &after) { return }
        if let socket = state.delivery.drained() { handBack(socket) }
    }

    /// Gives the connection back to libmicrohttpd, which ends the response (its reader sees the phase).
    /// Called on the move out of the socket phases, so once per stream.
    func handBack(_ socket: Int32) {
        sockets.forget(socket)
        connection.resume()
    }
}
