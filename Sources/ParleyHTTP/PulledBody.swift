import CMicroHTTPD
import Synchronization

/// A response body made as the client reads it (`HTTPResponse.Body.pulled`): large answers, such as
/// an export of every conversation, are sent chunked without ever being whole in memory, and a
/// client that reads slowly slows the producer instead of growing a buffer.
///
/// libmicrohttpd calls `read` on a worker thread whenever the socket can take bytes; `next` then
/// makes the next piece. It runs on that thread, so it must be quick (a short SQLite read is); it is
/// never called again after it returns nil or throws. A throw ends the response abruptly: the client
/// sees the chunked body cut off, never a body that looks complete.
final class PulledBody: Sendable {
    private struct State {
        var piece: [UInt8] = []
        var offset = 0
        var ended = false
    }

    private let next: @Sendable () throws -> [UInt8]?
    private let state = Mutex(State())

    init(_ next: @escaping @Sendable () throws -> [UInt8]?) {
        self.next = next
    }

    /// libmicrohttpd's content reader: copies up to `maximum` bytes, asking `next` for a piece when
    /// the last one is used up. Returns the count, or MHD's end-of-stream or end-with-error.
    func read(into destination: UnsafeMutablePointer<CChar>, maximum: Int) -> Int {
        state.withLock { state -> Int in
            while state.offset == state.piece.count {
                guard !state.ended else { return PulledBody.endOfStream }
                do {
                    guard let piece = try next() else {
                        state.ended = true
                        return PulledBody.endOfStream
                    }
                    state.piece = piece
                    state.offset = 0
                } catch {
                    state.ended = true
                    state.piece = []
                    state.offset = 0
                    return PulledBody.endWithError
                }
            }
            let count = min(maximum, state.piece.count - state.offset)
            state.piece.withUnsafeBufferPointer { bytes in
                guard let base = bytes.baseAddress else { return }
                UnsafeMutableRawPointer(destination).copyMemory(from: base + state.offset, byteCount: count)
            }
            state.offset += count
            return count
        }
    }

    static let endOfStream = -1  // MHD_CONTENT_READER_END_OF_STREAM
    static let endWithError = -2  // MHD_CONTENT_READER_END_WITH_ERROR
}

/// MHD's reader callback for a `PulledBody` (its `cls`).
func pulledRead(
    _ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ maximum: Int
) -> Int {
    guard let cls, let buffer else { return PulledBody.endWithError }
    return Unmanaged<PulledBody>.fromOpaque(cls).takeUnretainedValue().read(into: buffer, maximum: maximum)
}

/// MHD's free callback: the response is done with the body (sent, or the client left).
func pulledFreed(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    Unmanaged<PulledBody>.fromOpaque(cls).release()
}
