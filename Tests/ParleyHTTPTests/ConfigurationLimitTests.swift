import Foundation
import ParleyHTTP
import ParleyTestSupport
import XCTest

/// One test per configured limit that the other suites do not already cover.
final class ConfigurationLimitTests: XCTestCase {
    private func hello(_ router: inout Router) {
        router.on("GET", "/api/hello") { _ in .text("hi") }
    }

    /// The ids of this process's libmicrohttpd threads: it names them "MHD-worker" (a pool) or
    /// "MHD-single" (one thread serving everything).
    private func serverThreads() -> Set<String> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(tasks.filter { task in
            let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
            let trimmed = name?.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed == "MHD-worker" || trimmed == "MHD-single"
        })
    }

    func testThreadPoolSizeIsTheNumberOfWorkerThreads() throws {
        for size in [1, 3] {
            // Threads of other servers may come and go meanwhile: only new thread ids count.
            let before = serverThreads()
            let (server, _) = try startServer(self, configure: { $0.threadPoolSize = size }, routes: hello)
            // Each thread names itself once it runs, which may be just after start returns.
            let deadline = Date().addingTimeInterval(10)
            var started = serverThreads().subtracting(before)
            while started.count < size, Date() < deadline {
                usleep(1_000)
                started = serverThreads().subtracting(before)
            }
            XCTAssertEqual(started.count, size, "threads of a server with a pool of \(size)")
            server.shutdown()
            XCTAssertTrue(serverThreads().isDisjoint(with: started), "the threads end with the server")
        }
    }

    func testConnectionLimitRefusesExtraConnections() throws {
        let (_, base) = try startServer(self, configure: {
            $0.threadPoolSize = 1
            $0.connectionLimit = 2
        }, routes: hello)
        let port = try XCTUnwrap(Int(base.split(separator: ":").last ?? ""))
        let first = try RawConnection(port: port)
        let second = try RawConnection(port: port)
        // The kernel queues connections in order: these two are accepted before the third, however
        // long the server takes to get to them.
        XCTAssertThrowsError(try TestHTTPClient().request(base + "/api/hello", timeout: 2))
        first.close()
        second.close()
        // The server frees the slots once it has seen the closes (and the third, abandoned
        // connection): on a loaded machine that can take a while, so ask until it answers.
        let deadline = Date().addingTimeInterval(20)
        var status: Int?
        repeat {
            status = try? TestHTTPClient().request(base + "/api/hello", timeout: 2).status
            if status != 200 { usleep(50_000) }
        } while status != 200 && Date() < deadline
        XCTAssertEqual(status, 200, "the slots of closed connections are freed")
    }

    func testConnectionTimeoutClosesSilentConnection() throws {
        let (_, base) = try startServer(self, configure: { $0.connectionTimeout = 1 }, routes: hello)
        let port = try XCTUnwrap(Int(base.split(separator: ":").last ?? ""))
        let socket = try RawConnection(port: port)
        defer { socket.close() }
        let started = Date()
        XCTAssertTrue(socket.readUntilClosed(timeout: 20).closed)
        let waited = Date().timeIntervalSince(started)
        XCTAssertGreaterThan(waited, 0.5)
        // 1 s (checked at 1 s granularity), far from the 120 s default; slack for a loaded machine.
        XCTAssertLessThan(waited, 10)
    }

    func testHeadersLargerThanConnectionMemoryAreRejected() throws {
        let (_, base) = try startServer(self, configure: { $0.connectionMemoryLimit = 8 * 1024 }, routes: hello)
        let client = TestHTTPClient()
        let big = String(repeating: "a", count: 16 * 1024)
        let status = (try? client.request(base + "/api/hello", headers: [("X-Big", big)]))?.status
        XCTAssertNotEqual(status, 200)
        XCTAssertEqual(try client.request(base + "/api/hello").status, 200)
    }

    func testShutdownGracePeriodBoundsDrainOfStuckStream() throws {
        let closed = Counter()
        let flooded = Counter()
        let (server, base) = try startServer(self, configure: {
            $0.shutdownGracePeriod = 0.5
            $0.streamBacklogLimit = 64 << 20
        }) { router in
            router.on("GET", "/flood") { _ in
                HTTPResponse(body: .eventStream { writer in
                    writer.onClose { closed.increment() }
                    writer.write([UInt8](repeating: 65, count: 32 << 20))
                    flooded.increment()
                })
            }
        }
        let port = try XCTUnwrap(Int(base.split(separator: ":").last ?? ""))
        let socket = try RawConnection(port: port)
        defer { socket.close() }
        socket.send("GET /flood HTTP/1.1\r\nHost: x\r\n\r\n")
        // Shut down only once the stream is stuck (a fixed sleep could come before the handler ran).
        XCTAssertTrue(flooded.wait(for: 1, timeout: 20))
        let done = DispatchSemaphore(value: 0)
        let started = Date()
        Thread {
            server.shutdown()
            done.signal()
        }.start()
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success, "shutdown must not wait for a client that never reads")
        // 0.5 s of grace, well under the 5 s default; slack for a loaded machine.
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
        XCTAssertEqual(closed.current, 1)
    }

    func testMalformedEscapeIsBadRequest() throws {
        let (_, base) = try startServer(self, routes: hello)
        let response = try TestHTTPClient().request(base + "/api/hello%zz")
        XCTAssertEqual(response.status, 400)
        XCTAssertTrue(response.text.contains(#""code":"bad_request""#))
    }
}
