import Foundation
import ParleyHTTP
import ParleyTestSupport
import Synchronization
import XCTest

/// `streamBacklogTotalLimit` on a real server: clients that never read (raw sockets with a small
/// receive buffer, never `recv`) fill their streams' backlogs; the total stays within the budget, the
/// largest backlogs are closed first, and a client that reads is not disturbed.
///
/// Sizes are large against what the kernel takes off a stream whose client does not read: on
/// loopback the send buffer autotunes up to `tcp_wmem`'s maximum (4 MiB), so a 3 MiB backlog could
/// vanish into the kernel and a test in that range would depend on timing.
final class StreamBacklogTotalTests: XCTestCase {
    private static let budget = 24 << 20

    func testTheLargestBacklogsAreClosedAndAReadingClientIsUnaffected() throws {
        let held = Counter()
        let closedOrder = ClosedStreams()
        func closed(_ name: String) -> Bool { closedOrder.names.contains(name) }
        let (server, _) = try startServer(self, configure: {
            $0.streamBacklogLimit = 64 << 20  // only the total acts here
            $0.streamBacklogTotalLimit = Self.budget
        }) { router in
            // Streams that write once and then stay open: what a snapshot does to a client that never reads.
            for (name, size) in [("small-a", 1 << 20), ("small-b", 1 << 20), ("large", 20 << 20)] {
                router.on("GET", "/\(name)") { _ in
                    HTTPResponse(body: .eventStream { writer in
                        writer.onClose { closedOrder.append(name) }
                        XCTAssertTrue(writer.write([UInt8](repeating: UInt8(ascii: "x"), count: size)))
                        held.increment()
                    })
                }
            }
            // A live stream to a client that never reads: it grows until it is closed.
            router.on("GET", "/growing") { _ in
                HTTPResponse(body: .eventStream { writer in
                    writer.onClose { closedOrder.append("growing") }
                    Task {
                        let piece = [UInt8](repeating: UInt8(ascii: "y"), count: 256 << 10)
                        for _ in 0..<(4 * 64) {
                            guard writer.write(piece) else { return }
                            try? await Task.sleep(for: .milliseconds(2))
                        }
                    }
                })
            }
            // A client that reads: 1 MiB, paced.
            router.on("GET", "/read") { _ in
                HTTPResponse(body: .eventStream { writer in
                    writer.onClose { closedOrder.append("read") }
                    Task {
                        let piece = [UInt8](repeating: UInt8(ascii: "r"), count: 16 << 10)
                        for _ in 0..<64 {
                            guard writer.write(piece) else { return }
                            try? await Task.sleep(for: .milliseconds(5))
                        }
                        writer.finish()
                    }
                })
            }
        }
        let port = server.port
        var clients: [NonReadingClient] = []
        defer { for client in clients { client.close() } }
        for name in ["small-a", "small-b", "large"] {
            clients.append(try NonReadingClient(port: port, path: "/\(name)"))
        }
        XCTAssertTrue(held.wait(for: 3, timeout: 20))

        let reading = Mutex<TestHTTPClient.Response?>(nil)
        let readerDone = DispatchGroup()
        readerDone.enter()
        Thread {
            let response = try? TestHTTPClient().request("http://127.0.0.1:\(port)/read", timeout: 60)
            reading.withLock { $0 = response }
            readerDone.leave()
        }.start()

        let growing = try NonReadingClient(port: port, path: "/growing")
        clients.append(growing)
        var peak = 0
        let deadline = Date().addingTimeInterval(30)
        while !closed("growing"), Date() < deadline {
            let total = server.unsentEventStreamBytes
            peak = max(peak, total)
            XCTAssertLessThanOrEqual(total, Self.budget, "the total unsent stays within the budget")
            usleep(500)
        }
        XCTAssertTrue(closed("growing"), "the growing stream became the largest and was closed")
        XCTAssertGreaterThan(peak, Self.budget / 2, "the non-reading streams were counted")

        XCTAssertEqual(readerDone.wait(timeout: .now() + 60), .success)
        let response = try XCTUnwrap(reading.withLock { $0 })
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.body.count, 1 << 20, "the reading client got every byte")

        let order = closedOrder.names
        // The large stream (not the one writing) was the largest when the growing one passed the budget
        // (it holds at least 20 - 4 MiB; the growing one at most 24 - 16 MiB then); the growing one
        // was the largest the next time.
        XCTAssertEqual(order.filter { $0 != "read" }, ["large", "growing"])
        XCTAssertFalse(closed("small-a"))
        XCTAssertFalse(closed("small-b"))
        XCTAssertTrue(clients[2].closedByServer(timeout: 20), "the large stream's connection is dropped")
        XCTAssertLessThanOrEqual(server.unsentEventStreamBytes, 2 << 20, "only the small streams are left")
    }

    /// Many streams evicting each other while their connections read, suspend and resume on the MHD
    /// threads: every reading client finishes, every non-reading stream ends, and shutdown returns
    /// (a lock-order mistake between a writer, the budget and MHD would hang here).
    func testEvictionsUnderLoadNeitherDeadlockNorDisturbReaders() throws {
        let ended = Counter()
        let (server, _) = try startServer(self, configure: {
            $0.streamBacklogLimit = 64 << 20
            $0.streamBacklogTotalLimit = 8 << 20
            $0.shutdownGracePeriod = 1
        }) { router in
            router.on("GET", "/flood") { _ in
                HTTPResponse(body: .eventStream { writer in
                    writer.onClose { ended.increment() }
                    Task {
                        let piece = [UInt8](repeating: UInt8(ascii: "f"), count: 128 << 10)
                        while writer.write(piece) { try? await Task.sleep(for: .milliseconds(1)) }
                    }
                })
            }
            router.on("GET", "/read") { _ in
                HTTPResponse(body: .eventStream { writer in
                    Task {
                        let piece = [UInt8](repeating: UInt8(ascii: "r"), count: 4 << 10)
                        for _ in 0..<100 {
                            guard writer.write(piece) else { return }
                            try? await Task.sleep(for: .milliseconds(1))
                        }
                        writer.finish()
                    }
                })
            }
        }
        let port = server.port
        let floods = try (0..<20).map { _ in try NonReadingClient(port: port, path: "/flood") }
        defer { for client in floods { client.close() } }
        let complete = Counter()
        onThreads(10) { _ in
            if let response = try? TestHTTPClient().request("http://127.0.0.1:\(port)/read", timeout: 60),
                response.status == 200, response.body.count == 100 * (4 << 10)
            {
                complete.increment()
            }
        }
        XCTAssertEqual(complete.current, 10, "every reading client got its whole stream")
        // Each flood grows until the budget closes it (the largest goes first, so all of them in turn).
        XCTAssertTrue(ended.wait(for: 20, timeout: 30), "\(ended.current) of 20 flooding streams ended")
        XCTAssertLessThanOrEqual(server.unsentEventStreamBytes, 8 << 20)
        let started = Date()
        server.shutdown()
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "shutdown returns")
    }
}

/// Names of closed streams, in the order they closed.
private final class ClosedStreams: Sendable {
    private let list = Mutex<[String]>([])
    func append(_ name: String) { list.withLock { $0.append(name) } }
    var names: [String] { list.withLock { $0 } }
}

/// A client that requests an event stream and never reads it: a small receive buffer, so the
/// server's bytes pile up on the server and not in the kernel.
final class NonReadingClient {
    private let connection: RawConnection
    var fd: Int32 { connection.fd }

    init(port: Int, path: String, receiveBuffer: Int32 = 4096) throws {
        connection = try RawConnection(port: port, receiveBuffer: Int(receiveBuffer))
        connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    }

    /// Reads (only now) until the server closes the connection; false if it is still open at `timeout`.
    func closedByServer(timeout: TimeInterval) -> Bool {
        var size: Int32 = 1 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        while Date() < deadline {
            var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 100) >= 0 else { return false }
            guard waiting.revents != 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count == 0 { return true }
            if count < 0, errno != EAGAIN, errno != EINTR { return errno == ECONNRESET }
        }
        return false
    }

    func close() {
        connection.close()
    }
}
