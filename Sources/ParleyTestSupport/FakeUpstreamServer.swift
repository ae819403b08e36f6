import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The server behind `FakeUpstream`: the listening socket, the accept thread and one thread per
/// connection. Its threads hold it, not the public `FakeUpstream`, so dropping that stops the server.
final class FakeUpstreamServer: Sendable {
    typealias Script = FakeUpstream.Script
    typealias RecordedRequest = FakeUpstream.RecordedRequest

    let port: Int

    private struct State {
        var queue: [Script] = []
        var requests: [RecordedRequest] = []
        var disconnects: [ContinuousClock.Instant] = []
        var sockets: Set<Int32> = []
        var stopping = false
        var listenerClosed = false
        var connections = 0
    }

    private let listener: Int32
    private let handler: @Sendable (RecordedRequest, FakeUpstreamServer) -> Script
    private let state = Mutex(State())

    /// A server answering each request with the script `handler` returns.
    convenience init(handler: @escaping @Sendable (RecordedRequest) -> Script) throws {
        try self.init(anyHandler: { request, _ in handler(request) })
    }

    /// A server answering requests with enqueued scripts, in order; an empty queue answers 500.
    convenience init() throws {
        try self.init(anyHandler: { _, server in
            server.state.withLock { $0.queue.isEmpty ? nil : $0.queue.removeFirst() }
                ?? .json("{\"error\":{\"message\":\"FakeUpstream: no script enqueued\"}}", status: 500)
        })
    }

    private init(anyHandler: @escaping @Sendable (RecordedRequest, FakeUpstreamServer) -> Script) throws {
        handler = anyHandler
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FakeUpstreamError.socket("socket: errno \(errno)") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            close(fd)
            throw FakeUpstreamError.socket("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "fake-upstream-accept"
        thread.start()
    }

    // MARK: - Scripting and inspection

    /// Queues scripts answered in order (only for a server made with `init()`).
    func enqueue(_ scripts: [Script]) {
        state.withLock { $0.queue.append(contentsOf: scripts) }
    }

    /// Every request received so far, in arrival order.
    var requests: [RecordedRequest] { state.withLock { $0.requests } }

    /// When clients disconnected while a response was still in progress (sending, sleeping or stalled).
    var disconnects: [ContinuousClock.Instant] { state.withLock { $0.disconnects } }

    /// Number of TCP connections accepted so far.
    var connectionCount: Int { state.withLock { $0.connections } }

    /// Waits until at least `count` disconnects were recorded; returns the latest one, or nil on timeout.
    func waitForDisconnect(count: Int = 1, timeout: Duration = .seconds(5)) async -> ContinuousClock.Instant? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let disconnects = self.disconnects
            if disconnects.count >= count { return disconnects.last }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return nil
    }

    /// Stops accepting, and ends every open connection. Idempotent. Returns once the listening
    /// socket is closed, so a connection attempt right after is refused (not accepted into a backlog
    /// the accept thread has not yet let go of).
    func shutdown() {
        // Under the lock: a connection thread removes its socket from the set (under the lock)
        // before closing it, so no descriptor here can have been closed and reused by someone else
        // (shutting down a reused descriptor would cut an unrelated connection of the process).
        state.withLock { state in
            if state.stopping { return }
            state.stopping = true
            for fd in state.sockets { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
        // The accept loop notices `stopping` within one 20 ms poll; bounded in case it is starved.
        let deadline = ContinuousClock.now + .seconds(20)
        while !state.withLock({ $0.listenerClosed }), ContinuousClock.now < deadline {
            usleep(1_000)
        }
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    // MARK: - Connections

    private func acceptLoop() {
        defer {
            close(listener)
            state.withLock { $0.listenerClosed = true }
        }
        while !isStopping {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 20) > 0 else { continue }
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { continue }
            var yes: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            let accepted = state.withLock { state -> Bool in
                guard !state.stopping else { return false }
                state.sockets.insert(fd)
                state.connections += 1
                return true
            }
            guard accepted else {
                close(fd)
                break
            }
            let thread = Thread { [self] in serve(fd) }
            thread.name = "fake-upstream-connection"
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer {
            state.withLock { _ = $0.sockets.remove(fd) }
            close(fd)
        }
        var pending: [UInt8] = []
        while !isStopping {
            guard let request = readRequest(fd, pending: &pending) else { return }
            state.withLock { $0.requests.append(request) }
            let script = handler(request, self)
            guard play(script, on: fd) else { return }
        }
    }

    private func recordDisconnect() {
        let now = ContinuousClock.now
        state.withLock { $0.disconnects.append(now) }
    }

    /// Plays one script. Returns true when the connection may carry another request.
    private func play(_ script: Script, on fd: Int32) -> Bool {
        if !script.raw {
            var head = "HTTP/1.1 \(script.status) \(Self.reason(script.status))\r\n"
            for (name, value) in script.headers { head += "\(name): \(value)\r\n" }
            switch script.framing {
            case .chunked: head += "Transfer-Encoding: chunked\r\n"
            case .close: head += "Connection: close\r\n"
            case .contentLength:
                let length = script.steps.reduce(0) { sum, step in
                    if case .send(let bytes) = step { return sum + bytes.count }
                    return sum
                }
                head += "Content-Length: \(length)\r\n"
            }
            head += "\r\n"
            guard write(fd, Array(head.utf8)) else { return false }
        }
        for step in script.steps {
            switch step {
            case .send(let bytes):
                var wire = bytes
                if !script.raw, script.framing == .chunked {
                    if bytes.isEmpty { continue }  // an empty chunk would end the body
                    wire = Array(String(bytes.count, radix: 16).utf8) + [13, 10] + bytes + [13, 10]
                }
                guard write(fd, wire) else { return false }
            case .sleep(let milliseconds):
                if waitForClientClose(fd, milliseconds: milliseconds) { return false }
            case .close:
                return false
            case .stall:
                while !isStopping {
                    if waitForClientClose(fd, milliseconds: 20) { return false }
                }
                return false
            case .wait(let gate):
                gate.markReached()
                while !gate.isOpen {
                    if isStopping { return false }
                    if waitForClientClose(fd, milliseconds: 5) { return false }
                }
            }
        }
        if script.raw || script.framing == .close { return false }
        if script.framing == .chunked { return write(fd, Array("0\r\n\r\n".utf8)) }
        return true
    }

    /// Sleeps up to `milliseconds`, returning true (and recording it) as soon as the client disconnects.
    private func waitForClientClose(_ fd: Int32, milliseconds: Int) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        while true {
            let left = deadline - ContinuousClock.now
            let ms = Int(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            if ms <= 0 { return false }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, Int32(ms)) > 0 {
                var scratch = [UInt8](repeating: 0, count: 4096)
                let n = recv(fd, &scratch, scratch.count, 0)
                if n <= 0 {
                    recordDisconnect()
                    return true
                }
                // The client sent more (a pipelined request): ignored while a response is playing.
            }
        }
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 {
                if n < 0, errno == EINTR { continue }
                recordDisconnect()
                return false
            }
            offset += n
        }
        return true
    }

    // MARK: - Request parsing

    private func readRequest(_ fd: Int32, pending: inout [UInt8]) -> RecordedRequest? {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = Self.find(separator, in: pending)
            if headerEnd == nil {
                guard pending.count < FakeUpstream.maxRequestBytes, receive(fd, into: &pending) else { return nil }
            }
        }
        guard let headerEnd else { return nil }
        let head = String(decoding: pending[0..<headerEnd], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [(String, String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        pending.removeFirst(headerEnd + 4)
        let length = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
        guard length <= FakeUpstream.maxRequestBytes else { return nil }
        while pending.count < length {
            guard receive(fd, into: &pending) else { return nil }
        }
        let body = Array(pending[0..<length])
        pending.removeFirst(length)
        return RecordedRequest(method: String(requestLine[0]), path: String(requestLine[1]), headers: headers, body: body)
    }

    private func receive(_ fd: Int32, into buffer: inout [UInt8]) -> Bool {
        var scratch = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &scratch, scratch.count, 0)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            buffer.append(contentsOf: scratch[0..<n])
            return true
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        }
        return nil
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status"
        }
    }
}
