import CMicroHTTPD
import Foundation
import Synchronization

/// Every open TCP connection, so that a few clients cannot hold all of them: connections per client
/// address are capped, and a connection whose request headers do not arrive in time is closed
/// (slowloris). libmicrohttpd's own idle timeout restarts on every byte, so it cannot do the second.
///
/// Thread-safe (one mutex). libmicrohttpd reports a connection closed before it closes the socket, and
/// `closeOverdue` shuts sockets down under the same lock, so it never touches a descriptor that has
/// been closed and reused.
final class ConnectionRegistry: Sendable {
    /// One connection, kept by libmicrohttpd as the connection's socket context.
    final class Entry: Sendable {
        let address: String
        let socket: Int32

        init(address: String, socket: Int32) {
            self.address = address
            self.socket = socket
        }
    }

    private struct Tracked {
        let entry: Entry
        /// Uptime nanoseconds by which the current request's headers must be complete; nil while a
        /// request is being handled or answered.
        var deadline: UInt64?
        /// An upload body is being received: a peer that has left is looked for on every tick.
        var receivingUpload = false
    }

    private struct State {
        var perAddress: [String: Int] = [:]
        var open: [ObjectIdentifier: Tracked] = [:]
    }

    private let perAddressLimit: Int
    private let exemptAddresses: [AddressRange]
    private let headerTimeout: UInt64
    /// Idle keep-alive time allowed between a response and the next request line.
    private let idleTimeout: UInt64?
    private let state = Mutex(State())

    /// - Parameters:
    ///   - perAddressLimit: open connections one client address may hold.
    ///   - exemptAddresses: address ranges not capped (reverse proxies: every client arrives through them).
    ///   - headerTimeout: seconds from accept (or from the request line on a kept-alive connection)
    ///     to the end of the request headers.
    ///   - idleTimeout: seconds a kept-alive connection may wait for its next request (nil: no limit).
    init(perAddressLimit: Int, exemptAddresses: [AddressRange], headerTimeout: TimeInterval, idleTimeout: TimeInterval?) {
        self.perAddressLimit = max(1, perAddressLimit)
        self.exemptAddresses = exemptAddresses
        self.headerTimeout = UInt64(max(0.001, headerTimeout) * 1e9)
        self.idleTimeout = idleTimeout.map { UInt64(max(0, $0) * 1e9) }
    }

    // MARK: - Admission

    /// The accept policy: false when the address already holds its share of connections.
    func admits(_ address: String) -> Bool {
        if exemptAddresses.contains(address: address) { return true }
        return state.withLock { ($0.perAddress[address] ?? 0) < perAddressLimit }
    }

    /// Counted when libmicrohttpd has really added the connection (it may still drop one after the
    /// accept policy, at its own connection limit, without telling). Two worker threads may both
    /// pass the accept policy for the last slot of an address: the one counted past the cap has its
    /// socket shut down at once, so the cap is exact.
    func opened(address: String, socket: Int32, now: UInt64) -> Entry {
        let entry = Entry(address: address, socket: socket)
        let exempt = exemptAddresses.contains(address: address)
        state.withLock { state in
            state.perAddress[address, default: 0] += 1
            state.open[ObjectIdentifier(entry)] = Tracked(entry: entry, deadline: now + headerTimeout)
            if !exempt, (state.perAddress[address] ?? 0) > perAddressLimit {
                _ = shutdown(socket, Int32(SHUT_RDWR))
            }
        }
        return entry
    }

    func closed(_ entry: Entry) {
        state.withLock { state in
            guard state.open.removeValue(forKey: ObjectIdentifier(entry)) != nil else { return }
            let remaining = (state.perAddress[entry.address] ?? 1) - 1
            state.perAddress[entry.address] = remaining > 0 ? remaining : nil
        }
    }

    // MARK: - Header deadline

    /// A request line arrived: its headers are due within the header timeout (never later than an
    /// earlier deadline, so a slow first request cannot buy time).
    func requestStarted(_ entry: Entry, now: UInt64) {
        update(entry) { deadline in
            let due = now + headerTimeout
            deadline = min(deadline ?? due, due)
        }
    }

    /// The headers are complete: the request is the handler's now.
    func headersReceived(_ entry: Entry) {
        update(entry) { $0 = nil }
    }

    /// The response was sent: the next request line must come within the idle timeout and its
    /// headers within the header timeout, however slowly its bytes trickle in.
    func requestCompleted(_ entry: Entry, now: UInt64) {
        update(entry) { deadline in
            deadline = idleTimeout.map { now + $0 + headerTimeout }
        }
    }

    // MARK: - Uploads

    /// An upload body started or ended (see `closeOverdue`).
    func receivingUpload(_ entry: Entry, _ receiving: Bool) {
        state.withLock { $0.open[ObjectIdentifier(entry)]?.receivingUpload = receiving }
    }

    /// Shuts down the socket of every connection past its deadline, and of every upload whose client
    /// has left (libmicrohttpd then sees the connection end and cleans it up on its own thread).
    /// Why the second: 0.9.75 with epoll takes a short read as "drained" and waits for the next edge,
    /// so a FIN that arrived with the last body bytes goes unnoticed, and the upload's temp file and
    /// slot would be held until the idle timeout. Returns how many.
    @discardableResult
    func closeOverdue(now: UInt64) -> Int {
        state.withLock { state in
            var closed = 0
            for (key, tracked) in state.open {
                if let deadline = tracked.deadline, deadline <= now {
                    state.open[key]?.deadline = nil
                } else if tracked.receivingUpload, parley_socket_peer_closed(tracked.entry.socket) != 0 {
                    state.open[key]?.receivingUpload = false
                } else {
                    continue
                }
                _ = shutdown(tracked.entry.socket, Int32(SHUT_RDWR))
                closed += 1
            }
            return closed
        }
    }

    // MARK: - Reading

    /// Open connections of one address (tests and logs).
    func count(of address: String) -> Int {
        state.withLock { $0.perAddress[address] ?? 0 }
    }

    private func update(_ entry: Entry, _ change: (inout UInt64?) -> Void) {
        state.withLock { state in
            let key = ObjectIdentifier(entry)
            guard var tracked = state.open[key] else { return }
            change(&tracked.deadline)
            state.open[key] = tracked
        }
    }
}
