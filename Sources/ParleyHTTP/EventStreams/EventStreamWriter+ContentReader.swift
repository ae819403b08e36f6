/// The libmicrohttpd side of a writer: its content reader, called for body bytes, and the end of the
/// connection. libmicrohttpd calls these on the connection's worker thread, one call at a time.
extension EventStreamWriter {
    static let endOfStream = -1  // MHD_CONTENT_READER_END_OF_STREAM
    static let endWithError = -2  // MHD_CONTENT_READER_END_WITH_ERROR

    /// libmicrohttpd's content reader. Its first call comes once the headers are sent: the connection
    /// is suspended and its socket handed to the loop, and 0 returned (libmicrohttpd asks again only
    /// when the connection is resumed). Its next call ends the response: the last chunk when the
    /// stream drained, an error (the connection closes) when it was dropped.
    func read(into destination: UnsafeMutablePointer<CChar>, maximum: Int) -> Int {
        var after = Aftermath()
        let result = state.withLock { state -> Int in
            switch state.delivery {
            case .awaitingHandOff:
                let socket = connection.socket()
                guard socket >= 0 else {
                    drop(&state, into: &after)
                    return Self.endWithError
                }
                // Suspended before the loop may hand it back (an empty finished stream does at once).
                connection.suspend()
                takeSocket(socket, &state, into: &after)
                return 0
            case .ending:
                let ending = state.delivery.ended()
                budget?.remove(self)
                after.closeHandlers = Self.takeCloseHandlers(&state)
                return ending == .drained ? Self.endOfStream : Self.endWithError
            case .writing, .awaitingWritable, .finished:
                // Not called while suspended; after the end there is nothing to send.
                return Self.endWithError
            }
        }
        settle(after)
        return result
    }

    /// The connection or response is gone: never touch the connection again.
    func connectionEnded() {
        var after = Aftermath()
        state.withLock { state in
            if let socket = state.delivery.connectionGone().socket { sockets.forget(socket) }
            after.released = state.pending.count + state.outgoing.count
            state.pending = PendingBytes()
            state.outgoing = PendingBytes()
            budget?.remove(self)
            after.closeHandlers = Self.takeCloseHandlers(&state)
        }
        settle(after)
    }
}
