import Foundation
@testable import ParleyHTTP
import XCTest

/// One event stream over a real socketpair and a real `StreamSocketLoop`, with libmicrohttpd played by
/// the test: `handOff()` and `end()` are its calls to the content reader, and the suspends and resumes
/// the writer asks of the connection are counted. The writer's end has a small send buffer, so a peer
/// that does not read fills it after a few KiB.
/// One owner; the peer may be read from another thread than the one writing.
final class SocketPairStream: @unchecked Sendable {
    let writer: EventStreamWriter
    let suspends = Counter()
    let resumes = Counter()
    private let loop: StreamSocketLoop
    private let ownsLoop: Bool
    private var local: Int32
    private var peer: Int32

    init(loop shared: StreamSocketLoop? = nil, backlogLimit: Int = 1 << 20, chunked: Bool = false,
         budget: StreamBacklogBudget<EventStreamWriter>? = nil) throws {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        var size: Int32 = 4096
        setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        local = pair[0]
        peer = pair[1]
        let loop = try shared ?? XCTUnwrap(StreamSocketLoop(), "epoll and eventfd")
        self.loop = loop
        ownsLoop = shared == nil
        let socket = pair[0]
        let (suspends, resumes) = (suspends, resumes)
        writer = EventStreamWriter(
            connection: StreamConnection(
                socket: { socket }, suspend: { suspends.increment() }, resume: { resumes.increment() }),
            sockets: loop, backlogLimit: backlogLimit, chunked: chunked, budget: budget) { _ in }
    }

    deinit { close() }

    /// libmicrohttpd's call for body bytes: the first takes the socket over, the next ends the response.
    func read() -> Int {
        var bytes = [CChar](repeating: 0, count: 4096)
        return bytes.withUnsafeMutableBufferPointer { writer.read(into: $0.baseAddress!, maximum: $0.count) }
    }

    /// Reads at the peer until `count` bytes arrived or `timeout` passed.
    func receive(_ count: Int, timeout: TimeInterval = 10) -> [UInt8] {
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        while received.count < count, Date() < deadline {
            var waiting = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 50) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: count - received.count)
            let got = recv(peer, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if got <= 0 { if got == 0 { break } else { continue } }
            received += buffer[..<got]
        }
        return received
    }

    /// Reads what the peer has, up to `maximum` bytes, without waiting.
    func receiveAvailable(maximum: Int) -> Int {
        var buffer = [UInt8](repeating: 0, count: maximum)
        return max(0, recv(peer, &buffer, maximum, Int32(MSG_DONTWAIT)))
    }

    /// Whether more bytes arrive at the peer within `timeout`.
    func receivesMore(within timeout: TimeInterval) -> Bool {
        var waiting = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
        return poll(&waiting, 1, Int32(timeout * 1000)) > 0
    }

    /// The client leaves.
    func hangUp() {
        if peer >= 0 { Glibc.close(peer) }
        peer = -1
    }

    /// libmicrohttpd reports the connection gone, then the sockets close (once; later calls do nothing).
    func close() {
        guard local >= 0 else { return }
        writer.connectionEnded()
        hangUp()
        Glibc.close(local)
        local = -1
        if ownsLoop { loop.stop() }
    }
}

/// Waits until `condition` holds, checking every 2 ms, at most `timeout` seconds.
func eventually(_ timeout: TimeInterval = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() > deadline { return false }
        usleep(2_000)
    }
    return true
}
