import Foundation
import ParleyHTTP
import ParleyTestSupport
import XCTest

/// Requests whose framing could smuggle a second request past the first, and bodies over the limit.
/// Each is answered once, with a JSON error, and the connection is closed: the bytes after it are never
/// run as a request.
final class RequestFramingTests: XCTestCase {
    /// Counts every request that reached a handler.
    private let handled = Counter()

    private func server(_ configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws -> Int {
        let handled = handled
        let (server, _) = try startServer(self, configure: configure) { router in
            router.on("POST", "/api/echo") { request in
                handled.increment()
                return HTTPResponse(status: 200, body: .bytes(request.body))
            }
            // A route with a body limit of its own (8 KiB), whatever the server's.
            router.on("POST", "/api/large", maxBodyBytes: 8192) { request in
                handled.increment()
                return HTTPResponse(status: 200, body: .bytes(Array("\(request.body.count)".utf8)))
            }
            router.on("GET", "/api/hello", immediate: { _ in
                handled.increment()
                return .text("hello")
            })
        }
        return server.port
    }

    private static let smuggled = "GET /api/hello HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    /// Sends `head` (request line and headers, without the blank line) then `rest`, and returns what came back.
    private func exchange(_ port: Int, _ head: String, _ rest: String = "") throws -> RawConnection.Received {
        let connection = try RawConnection(port: port)
        connection.send(head + "\r\n\r\n" + rest)
        return connection.readUntilClosed(timeout: 10)
    }

    private func assertRefused(
        _ received: RawConnection.Received, status: Int, code: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertTrue(received.text.hasPrefix("HTTP/1.1 \(status) "), received.text, file: file, line: line)
        XCTAssertEqual(received.statusLines, 1, "exactly one response: \(received.text)", file: file, line: line)
        XCTAssertTrue(received.text.contains("\"code\":\"\(code)\""), received.text, file: file, line: line)
        XCTAssertTrue(received.text.lowercased().contains("connection: close"), received.text, file: file, line: line)
        XCTAssertTrue(received.closed, "the connection is closed after the refusal", file: file, line: line)
        XCTAssertEqual(handled.current, 0, "no handler ran, the smuggled request neither", file: file, line: line)
    }

    func testContentLengthWithChunkedIsRefusedAndTheRestIsNotRun() throws {
        let port = try server()
        let received = try exchange(
            port, "POST /api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked",
            "5\r\nhello\r\n0\r\n\r\n" + Self.smuggled)
        assertRefused(received, status: 400, code: "bad_request")
    }

    func testTwoDifferentContentLengthsAreRefused() throws {
        let port = try server()
        let received = try exchange(
            port, "POST /api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nContent-Length: 10",
            "hello" + Self.smuggled)
        assertRefused(received, status: 400, code: "bad_request")
    }

    func testHeaderNameWithSpaceIsRefused() throws {
        let port = try server()
        let received = try exchange(
            port, "POST /api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding : chunked\r\nContent-Length: 5",
            "hello" + Self.smuggled)
        assertRefused(received, status: 400, code: "bad_request")
    }

    func testUnknownTransferCodingsAreNotImplementedNotLeftHanging() throws {
        let port = try server()
        for coding in ["gzip", "identity", "gzip, chunked", "chunked, chunked"] {
            let received = try exchange(
                port, "POST /api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: \(coding)", "hello")
            assertRefused(received, status: 501, code: "not_implemented")
        }
    }

    /// libmicrohttpd 0.9.75 answers a malformed Content-Length itself, before Parley sees the request,
    /// and writes its status line twice (a bug of that version). What Parley can promise: a 400, nothing
    /// run, the connection closed.
    func testMalformedContentLengthRunsNothing() throws {
        let port = try server()
        let received = try exchange(
            port, "POST /api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5", "hello" + Self.smuggled)
        XCTAssertTrue(received.text.hasPrefix("HTTP/1.1 400 "), received.text)
        XCTAssertTrue(received.closed)
        XCTAssertEqual(handled.current, 0)
    }

    func testChunkedRequestsStillWork() throws {
        let port = try server()
        let connection = try RawConnection(port: port)
        connection.send("POST /api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5\r\nhello\r\n0\r\n\r\n" + Self.smuggled.replacingOccurrences(of: "\r\n\r\n", with: "\r\nConnection: close\r\n\r\n"))
        let received = connection.readUntilClosed(timeout: 10)
        XCTAssertEqual(received.statusLines, 2, received.text)
        XCTAssertTrue(received.text.contains("\r\n\r\nhello"), received.text)
        XCTAssertEqual(handled.current, 2, "a well-framed pipelined request is run")
    }

    // MARK: - Bodies over the limit

    private func chunkedUpload(_ port: Int, total: Int, path: String = "/api/echo") throws -> RawConnection.Received {
        let connection = try RawConnection(port: port)
        connection.send("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
        var sent = 0
        while sent < total {
            let size = min(chunk.count, total - sent)
            guard connection.send(Array(String(size, radix: 16).utf8) + [13, 10] + chunk[..<size] + [13, 10]) else {
                break
            }
            sent += size
        }
        connection.send("0\r\n\r\n")
        return connection.readUntilClosed(timeout: 10)
    }

    func testChunkedBodyOverTheLimitGets413AtItsEnd() throws {
        let port = try server { $0.maxBodyBytes = 64 * 1024 }
        let received = try chunkedUpload(port, total: 100 * 1024)
        assertRefused(received, status: 413, code: "payload_too_large")
    }

    func testChunkedBodyPastTheDiscardLimitIsCut() throws {
        let port = try server {
            $0.maxBodyBytes = 16 * 1024
            $0.maxDiscardBytes = 64 * 1024
        }
        let received = try chunkedUpload(port, total: 1 << 20)
        XCTAssertTrue(received.closed)
        XCTAssertEqual(received.statusLines, 0, "past the discard limit the connection is closed unanswered")
        XCTAssertEqual(handled.current, 0)
    }

    func testDeclaredBodyOverTheLimitIsRefusedBeforeItIsRead() throws {
        let port = try server { $0.maxBodyBytes = 1024 }
        let received = try exchange(port, "POST /api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5000")
        assertRefused(received, status: 413, code: "payload_too_large")
    }

    func testARouteWithItsOwnBodyLimitTakesBodiesUpToItAndNoFurther() throws {
        let port = try server { $0.maxBodyBytes = 1024 }
        let declared = try exchange(port, "POST /api/large HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 8193")
        assertRefused(declared, status: 413, code: "payload_too_large")
        let chunked = try chunkedUpload(port, total: 12 * 1024, path: "/api/large")
        assertRefused(chunked, status: 413, code: "payload_too_large")
        let elsewhere = try exchange(port, "POST /api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2000")
        assertRefused(elsewhere, status: 413, code: "payload_too_large")
        let body = String(repeating: "y", count: 8192)
        let taken = try exchange(port, "POST /api/large HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 8192\r\n"
                                     + "Connection: close", body)
        XCTAssertTrue(taken.text.hasPrefix("HTTP/1.1 200 "), taken.text)
        XCTAssertTrue(taken.text.hasSuffix("\r\n\r\n8192"), "the whole body reached the handler: \(taken.text)")
        XCTAssertEqual(handled.current, 1)
    }
}
