import Foundation
import ParleyHTTP
import ParleyTestSupport
import XCTest

/// Event-stream bodies are written to the socket directly once libmicrohttpd has sent the headers
/// (`StreamSocketLoop`): the framing must be what libmicrohttpd would have written, the connection
/// must come back to it intact, and a client that leaves is noticed without waiting for a write.
final class EventStreamSocketTests: XCTestCase {
    /// A stream that writes over time, long after the hand-off, then ends; a second request on the same
    /// connection is answered (the connection went back to libmicrohttpd in a clean state).
    func testChunkedBodyWrittenAfterTheHandOffEndsCleanlyAndTheConnectionIsReused() throws {
        let (server, _) = try startServer(self) { router in
            router.on("GET", "/events") { _ in
                HTTPResponse(body: .eventStream { writer in
                    Task {
                        for index in 0..<5 {
                            try? await Task.sleep(for: .milliseconds(20))
                            writer.write("data: \(index)\n\n")
                        }
                        writer.finish()
                    }
                })
            }
            router.on("GET", "/after") { _ in .text("still here") }
        }
        let connection = try RawConnection(port: server.port)
        defer { connection.close() }
        XCTAssertTrue(connection.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
        var received = connection.readUntil(timeout: 10) { String(decoding: $0, as: UTF8.self).hasSuffix("0\r\n\r\n") }
        let text = received.text
        let headEnd = try XCTUnwrap(text.range(of: "\r\n\r\n"), text)
        let body = String(text[headEnd.upperBound...])
        XCTAssertTrue(text.contains("Transfer-Encoding: chunked"), text)
        XCTAssertEqual(Self.unchunk(body), (0..<5).map { "data: \($0)\n\n" }.joined(), body.debugDescription)
        XCTAssertTrue(body.hasSuffix("0\r\n\r\n"), "the last chunk ends the body: \(body.debugDescription)")

        XCTAssertTrue(connection.send("GET /after HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
        received = connection.readResponse(timeout: 10)
        XCTAssertTrue(received.text.hasPrefix("HTTP/1.1 200"), received.text)
        XCTAssertTrue(received.text.hasSuffix("still here"), received.text)
    }

    /// HTTP/1.0 has no chunks: the body is the bytes as written and the end is the connection's close.
    func testHTTP10BodyIsUnframedAndEndsWithTheConnection() throws {
        let (server, _) = try startServer(self) { router in
            router.on("GET", "/events") { _ in
                HTTPResponse(body: .eventStream { writer in
                    Task {
                        writer.write("data: one\n\n")
                        try? await Task.sleep(for: .milliseconds(50))
                        writer.write("data: two\n\n")
                        writer.finish()
                    }
                })
            }
        }
        let connection = try RawConnection(port: server.port)
        defer { connection.close() }
        XCTAssertTrue(connection.send("GET /events HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"))
        let received = connection.readUntilClosed(timeout: 10)
        XCTAssertTrue(received.closed, "the server closes an HTTP/1.0 stream at its end")
        let text = received.text
        XCTAssertFalse(text.lowercased().contains("transfer-encoding"), text)
        XCTAssertTrue(text.hasSuffix("\r\n\r\ndata: one\n\ndata: two\n\n"), text.debugDescription)
    }

    /// A client that closes an idle stream is noticed at once (the loop watches for the hang-up), not at
    /// the next heartbeat: here heartbeats are ten minutes apart.
    func testAClientLeavingAnIdleStreamIsNoticedWithoutAWrite() throws {
        let closed = Counter()
        let (server, _) = try startServer(self, configure: { $0.heartbeatInterval = 600 }) { router in
            router.on("GET", "/events") { _ in
                HTTPResponse(body: .eventStream { writer in
                    writer.onClose { closed.increment() }
                    writer.write("data: hello\n\n")
                })
            }
        }
        let connection = try RawConnection(port: server.port)
        XCTAssertTrue(connection.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
        _ = connection.readUntil(timeout: 10) { String(decoding: $0, as: UTF8.self).contains("hello") }
        connection.close()
        XCTAssertTrue(closed.wait(for: 1, timeout: 10), "onClose runs when the client hangs up")
        usleep(200_000)
        XCTAssertEqual(closed.current, 1)
    }

    /// A body larger than a socket buffer, to a client that reads slowly: the loop finishes the sends
    /// the producer could not, in order, and nothing is lost or repeated.
    func testALargeBodyToASlowReaderArrivesWhole() throws {
        let piece = String(repeating: "x", count: 1000)
        let (server, _) = try startServer(self) { router in
            router.on("GET", "/events") { _ in
                HTTPResponse(body: .eventStream { writer in
                    for index in 0..<2000 { writer.write("data: \(index) \(piece)\n\n") }
                    writer.finish()
                })
            }
        }
        let connection = try RawConnection(port: server.port, receiveBuffer: 4096)
        defer { connection.close() }
        XCTAssertTrue(connection.send("GET /events HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"))
        usleep(300_000)  // the socket fills while nobody reads
        let received = connection.readUntilClosed(timeout: 30)
        XCTAssertTrue(received.closed)
        let body = received.text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        XCTAssertEqual(body, (0..<2000).map { "data: \($0) \(piece)\n\n" }.joined())
    }

    /// A stream whose socket was once full and then drained stays open and idle: the loop must stop
    /// asking for writability (epoll is level-triggered: a writable socket left in its set would wake
    /// the loop again and again, a core spinning for as long as the stream stays open).
    func testAStreamThatFilledItsSocketOnceCostsNoCPUWhenIdleAgain() throws {
        let piece = String(repeating: "x", count: 1000)
        let (server, _) = try startServer(self, configure: { $0.heartbeatInterval = 600; $0.streamBacklogLimit = 64 << 20 }) { router in
            router.on("GET", "/events") { _ in
                HTTPResponse(body: .eventStream { writer in
                    // 12 MB: more than the kernel's send buffer takes (loopback autotunes it up to 4 MiB).
                    for index in 0..<12_000 { writer.write("data: \(index) \(piece)\n\n") }
                    writer.write("data: end\n\n")  // and the stream stays open
                })
            }
        }
        let connection = try RawConnection(port: server.port, receiveBuffer: 4096)
        defer { connection.close() }
        XCTAssertTrue(connection.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
        usleep(300_000)  // the socket fills while nobody reads
        let received = connection.readUntil(timeout: 30) { String(decoding: $0.suffix(32), as: UTF8.self).contains("data: end") }
        XCTAssertFalse(received.closed)
        XCTAssertTrue(received.text.contains("data: end"), "the whole body arrived")
        usleep(200_000)
        var idleCPU = Double.infinity
        for _ in 0..<3 where idleCPU >= 0.05 {
            let before = processCPUSeconds()
            usleep(1_000_000)
            idleCPU = min(idleCPU, processCPUSeconds() - before)
        }
        XCTAssertLessThan(idleCPU, 0.05, "an idle stream costs no CPU after its socket was full once")
    }

    /// The body of a chunked response, decoded (on bytes: "\r\n" is one Character in Swift).
    private static func unchunk(_ body: String) -> String {
        let bytes = Array(body.utf8)
        var position = 0
        var out: [UInt8] = []
        while position < bytes.count {
            guard let lineEnd = (position..<bytes.count - 1).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 }),
                  let size = Int(String(decoding: bytes[position..<lineEnd], as: UTF8.self), radix: 16),
                  lineEnd + 2 + size + 2 <= bytes.count
            else { return "<bad chunk at \(position)>" }
            if size == 0 { break }
            out += bytes[(lineEnd + 2)..<(lineEnd + 2 + size)]
            position = lineEnd + 2 + size + 2
        }
        return String(decoding: out, as: UTF8.self)
    }
}
