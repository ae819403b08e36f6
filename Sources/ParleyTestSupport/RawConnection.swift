import Foundation

/// A plain TCP connection for what an HTTP client library will not send: broken framing, headers
/// one byte at a time, connections from another loopback address (127.0.0.2 plays a second machine).
/// Not thread-safe: one owner.
public final class RawConnection {
    public let fd: Int32
    private var isOpen = true

    public struct ConnectError: Error, CustomStringConvertible {
        public let errno: Int32
        public var description: String { "connect failed: \(String(cString: strerror(errno)))" }
    }

    /// Connects to 127.0.0.1:`port`, from `localAddress` when given.
    public init(port: Int, from localAddress: String? = nil, receiveBuffer: Int? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let localAddress {
            var local = RawConnection.address(localAddress, port: 0)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                let error = errno
                Glibc.close(fd)
                throw ConnectError(errno: error)
            }
        }
        var remote = RawConnection.address("127.0.0.1", port: port)
        let result = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let error = errno
            Glibc.close(fd)
            throw ConnectError(errno: error)
        }
    }

    deinit {
        close()
    }

    /// Closes the socket (once; later calls do nothing).
    public func close() {
        guard isOpen else { return }
        isOpen = false
        Glibc.close(fd)
    }

    private static func address(_ host: String, port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        return address
    }

    /// Sends everything; false when the peer has closed or reset the connection.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    @discardableResult
    public func send(_ text: String) -> Bool {
        send(Array(text.utf8))
    }

    /// What arrived until the peer closed the connection, or until `timeout` passed.
    public struct Received {
        public var bytes: [UInt8]
        /// True when the peer closed (or reset) the connection; false when the time ran out first.
        public var closed: Bool
        public var text: String { String(decoding: bytes, as: UTF8.self) }
        /// How many HTTP status lines the bytes hold (responses sent on this connection).
        public var statusLines: Int { text.components(separatedBy: "HTTP/1.1 ").count - 1 }
    }

    /// Reads until the peer closes or `timeout` seconds pass, whichever is first.
    public func readUntilClosed(timeout: TimeInterval) -> Received {
        readUntil(timeout: timeout) { _ in false }
    }

    /// Reads until `done` says the bytes so far are enough, the peer closes, or `timeout` seconds pass.
    public func readUntil(timeout: TimeInterval, _ done: ([UInt8]) -> Bool) -> Received {
        let deadline = Date().addingTimeInterval(timeout)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while !done(received) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return Received(bytes: received, closed: false) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, min(left, 1) * 1000)))
            if ready < 0 && errno != EINTR { return Received(bytes: received, closed: true) }
            guard ready > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { return Received(bytes: received, closed: true) }
            received += buffer[..<count]
        }
        return Received(bytes: received, closed: false)
    }

    /// Reads one response: until its headers and `Content-Length` body have arrived, the peer closes, or
    /// `timeout` seconds pass.
    public func readResponse(timeout: TimeInterval) -> Received {
        readUntil(timeout: timeout, RawConnection.holdsOneResponse)
    }

    private static func holdsOneResponse(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return false }
        let head = text[..<end.lowerBound].lowercased()
        guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
              let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return false }
        return text.utf8.distance(from: end.upperBound.samePosition(in: text.utf8) ?? text.utf8.endIndex,
                                  to: text.utf8.endIndex) >= length
    }

    /// Whether the peer has closed the connection, without waiting (reads and drops pending bytes).
    public var isClosedByPeer: Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count == 0 { return true }
            if count < 0 { return errno != EAGAIN && errno != EWOULDBLOCK }
        }
    }
}
