import CMicroHTTPD
import Foundation
import Synchronization

/// The thread that watches event-stream sockets once libmicrohttpd has sent their headers.
///
/// Why: libmicrohttpd 0.9.75 walks every suspended connection of a worker each time one is resumed.
/// An event stream used to be suspended between writes and resumed for each one, so with 10,000 idle
/// tabs every frame and every heartbeat paid a 10,000-connection walk. Now an event stream is
/// suspended once, its body is written to the socket directly by `EventStreamWriter` (from the
/// producer's thread, or from here when the socket was full), and libmicrohttpd gets the connection
/// back only to end the response. This loop only reports sockets that became writable again and
/// peers that hung up.
///
/// Thread-safety: `watch`, `want` and `forget` may be called from any thread (epoll_ctl is); the map
/// from socket to writer is under a mutex that is never held while a writer is called.
final class StreamSocketLoop: @unchecked Sendable {
    private let epoll: Int32
    /// Written by `stop` to end the thread.
    private let wake: Int32
    private let writers = Mutex<[Int32: EventStreamWriter]>([:])
    private let stopping = Atomic<Bool>(false)

    /// nil when epoll or eventfd cannot be had (the server then does not start: no stream could be served).
    init?() {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        let wake = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard epoll >= 0, wake >= 0 else {
            if epoll >= 0 { close(epoll) }
            if wake >= 0 { close(wake) }
            return nil
        }
        self.epoll = epoll
        self.wake = wake
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wake
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &event)
        let thread = Thread { [self] in run() }
        thread.name = "parley-streams"
        thread.start()
    }

    /// Starts watching `socket` for its peer hanging up.
    func watch(_ socket: Int32, for writer: EventStreamWriter) {
        writers.withLock { $0[socket] = writer }
        var event = Self.event(socket, writable: false)
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event)
    }

    /// Also report when `socket` can take more bytes (its send buffer was full), or stop that.
    func want(_ socket: Int32, writable: Bool) {
        var event = Self.event(socket, writable: writable)
        _ = epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event)
    }

    /// Stops watching `socket`; after this returns the loop never calls its writer for it again
    /// unless it is watched anew (the number may be reused by a later connection).
    func forget(_ socket: Int32) {
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, socket, nil)
        writers.withLock { _ = $0.removeValue(forKey: socket) }
    }

    /// Ends the thread (the server stopped; its streams were closed first).
    func stop() {
        stopping.store(true, ordering: .releasing)
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
    }

    private static func event(_ socket: Int32, writable: Bool) -> epoll_event {
        var event = epoll_event()
        event.events = EPOLLRDHUP.rawValue | (writable ? EPOLLOUT.rawValue : 0)
        event.data.fd = socket
        return event
    }

    private func run() {
        var ready = [epoll_event](repeating: epoll_event(), count: 512)
        while !stopping.load(ordering: .acquiring) {
            let count = epoll_wait(epoll, &ready, Int32(ready.count), -1)
            for index in 0..<max(0, Int(count)) {
                let socket = ready[index].data.fd
                let events = ready[index].events
                if socket == wake { continue }
                guard let writer = writers.withLock({ $0[socket] }) else { continue }
                if events & (EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
                    writer.socketHungUp(socket)
                } else if events & EPOLLOUT.rawValue != 0 {
                    writer.socketWritable(socket)
                }
            }
        }
        close(epoll)
        close(wake)
    }
}
