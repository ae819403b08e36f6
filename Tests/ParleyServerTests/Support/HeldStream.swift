import Foundation
import ParleyTestSupport

/// One request on a connection of its own whose answer is read as it arrives, so a test can hold a
/// stream open (it counts against the user's streams while open), wait for a marker in it, and see
/// whether and when the server ends it. Not thread-safe: one owner; its blocking reads run on a
/// thread of their own (`Blocking`), one at a time.
final class HeldStream: @unchecked Sendable {
    private let connection: RawConnection
    private var received: [UInt8] = []
    private var closed = false

    /// Sends the request (`body` as JSON when given); reads nothing yet. A small `receiveBuffer` keeps
    /// a client that does not read from taking much off the server.
    init(port: Int, _ path: String, method: String = "GET", headers: [(String, String)], body: String? = nil,
         receiveBuffer: Int? = nil) throws {
        connection = try RawConnection(port: port, receiveBuffer: receiveBuffer)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        _ = connection.send(head + "\r\n" + (body ?? ""))
    }

    /// Opens the request and reads until `marker` arrived; nil (the stream closed) when it did not
    /// within `timeout`.
    static func open(_ parley: TestParley, _ path: String, method: String = "GET", headers: [(String, String)],
                     body: String? = nil, until marker: String, receiveBuffer: Int? = nil,
                     timeout: TimeInterval = 20) async throws -> HeldStream? {
        let stream = try HeldStream(port: parley.app.port, path, method: method, headers: headers, body: body,
                                    receiveBuffer: receiveBuffer)
        guard try await stream.read(timeout: timeout, until: { $0.text.contains(marker) }) else {
            stream.close()
            return nil
        }
        return stream
    }

    // MARK: - What arrived

    var text: String { String(decoding: received, as: UTF8.self) }

    /// The response's head (status line and headers), once it arrived whole.
    private var head: String? {
        let start = String(decoding: received.prefix(16 * 1024), as: UTF8.self)
        return start.range(of: "\r\n\r\n").map { String(start[..<$0.lowerBound]) }
    }

    /// The status of the response (0 before its head arrived).
    var status: Int {
        guard let line = head?.split(separator: "\r\n").first, line.hasPrefix("HTTP/1.1 ") else { return 0 }
        return Int(line.dropFirst("HTTP/1.1 ".count).prefix(3)) ?? 0
    }

    func header(_ name: String) -> String? {
        let prefix = name.lowercased() + ":"
        return head?.split(separator: "\r\n").first { $0.lowercased().hasPrefix(prefix) }
            .map { $0.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces) }
    }

    /// Bytes of the body received (chunk framing included).
    var bodyCount: Int {
        guard let head else { return 0 }
        return received.count - head.utf8.count - 4
    }

    /// The body after the head, as sent (chunk framing included).
    var body: String {
        guard let head else { return "" }
        return String(decoding: received.dropFirst(head.utf8.count + 4), as: UTF8.self)
    }

    /// A plain answer's body as JSON (an error).
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }

    var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }

    /// Whether the body ended with the chunked encoding's last chunk (a complete stream, not a cut).
    var hasLastChunk: Bool { received.suffix(7).elementsEqual(Array("\r\n0\r\n\r\n".utf8)) }

    /// Whether the server ended the response: its last chunk, all of its Content-Length, or the
    /// connection closed.
    var hasEnded: Bool {
        if closed || hasLastChunk { return true }
        guard let length = header("Content-Length").flatMap({ Int($0) }) else { return false }
        return bodyCount >= length
    }

    /// Whether the connection was closed (not merely the response ended).
    var isClosed: Bool { closed }

    // MARK: - Reading

    /// Reads until `done` holds, the server closes the connection, or `timeout` passes; returns
    /// whether `done` held.
    func read(timeout: TimeInterval, until done: @escaping @Sendable (HeldStream) -> Bool) async throws -> Bool {
        try await Blocking.run { self.readNow(timeout: timeout, until: done) }
    }

    /// Reads until the server ends the response; returns whether it did within `timeout`.
    func waitForEnd(timeout: TimeInterval) async throws -> Bool {
        try await read(timeout: timeout) { $0.hasEnded }
    }

    func close() {
        connection.close()
    }

    private func readNow(timeout: TimeInterval, until done: (HeldStream) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if done(self) { return true }
            let left = deadline.timeIntervalSinceNow
            if closed || left <= 0 { return false }
            let got = connection.readUntil(timeout: min(left, 0.5)) { !$0.isEmpty }
            received += got.bytes
            if got.closed { closed = true }
        }
    }
}
