import Foundation
import ParleyHTTP
import ParleyTestSupport
import Synchronization
import XCTest

/// `HTTPResponse.Body.pulled`: a chunked body made as the client reads, ended by nil, cut off by a
/// throw, and no longer asked for once the client has gone.
final class PulledBodyTests: XCTestCase {
    struct Broken: Error {}

    /// A producer of `count` pieces of `size` bytes (piece i filled with byte i % 251), counting calls;
    /// `failAt` throws instead of that piece.
    final class Pieces: Sendable {
        let count: Int
        let size: Int
        let failAt: Int?
        private let calls = Mutex(0)

        init(count: Int, size: Int, failAt: Int? = nil) {
            self.count = count
            self.size = size
            self.failAt = failAt
        }

        var called: Int { calls.withLock { $0 } }

        func next() throws -> [UInt8]? {
            let index = calls.withLock { value -> Int in
                value += 1
                return value - 1
            }
            if index == failAt { throw Broken() }
            guard index < count else { return nil }
            return [UInt8](repeating: UInt8(index % 251), count: size)
        }

        var expected: [UInt8] {
            (0..<count).flatMap { [UInt8](repeating: UInt8($0 % 251), count: size) }
        }
    }

    func testPiecesArriveInOrderChunkedAndTheProducerIsNotAskedAfterTheEnd() throws {
        let pieces = Pieces(count: 300, size: 10_000)
        let (_, base) = try startServer(self) { router in
            router.on("GET", "/export") { _ in
                HTTPResponse(headers: [("Content-Type", "application/json")], body: .pulled { try pieces.next() })
            }
        }
        let response = try TestHTTPClient().request(base + "/export", timeout: 30)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("transfer-encoding"), "chunked")
        XCTAssertEqual(response.header("content-type"), "application/json")
        XCTAssertTrue(response.body == pieces.expected, "\(response.body.count) bytes")
        XCTAssertEqual(pieces.called, 301, "every piece, then one nil")
        // The connection is still good for the next request.
        let again = try TestHTTPClient().request(base + "/export", timeout: 30)
        XCTAssertEqual(again.status, 200)
    }

    func testAThrowCutsTheResponseOffSoItNeverLooksComplete() throws {
        let pieces = Pieces(count: 10, size: 1000, failAt: 3)
        let (_, base) = try startServer(self) { router in
            router.on("GET", "/export") { _ in HTTPResponse(body: .pulled { try pieces.next() }) }
        }
        XCTAssertThrowsError(try TestHTTPClient().request(base + "/export", timeout: 10),
                             "a cut chunked body is a transfer error, not a short success")
        XCTAssertEqual(pieces.called, 4)
    }

    func testAClientThatLeavesStopsTheProducer() throws {
        let pieces = Pieces(count: 1_000_000, size: 16_384)
        let (server, _) = try startServer(self) { router in
            router.on("GET", "/export") { _ in HTTPResponse(body: .pulled { try pieces.next() }) }
        }
        let connection = try RawConnection(port: server.port, receiveBuffer: 4096)
        XCTAssertTrue(connection.send("GET /export HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
        let deadline = Date().addingTimeInterval(10)
        while pieces.called == 0, Date() < deadline { usleep(5_000) }
        XCTAssertGreaterThan(pieces.called, 0)
        // The client does not read: the socket buffers fill and the producer waits for it.
        usleep(200_000)
        let stalled = pieces.called
        XCTAssertLessThan(stalled, 1000, "a client that does not read holds the producer back")
        connection.close()
        usleep(300_000)
        let after = pieces.called
        usleep(300_000)
        XCTAssertEqual(pieces.called, after, "not asked again once the client has gone")
    }
}
