import Foundation
import ParleyHTTP
import ParleyTestSupport
import Synchronization
import XCTest

/// Shutdown lets what is already under way finish: handlers, and the responses they return.
final class ShutdownTests: XCTestCase {
    func testAResponseOfAHandlerFinishingDuringShutdownIsDeliveredWhole() throws {
        let size = 8 << 20
        for _ in 0..<3 {
            let started = Counter()
            let (server, base) = try startServer(self) { router in
                router.on("GET", "/slow") { _ in
                    started.increment()
                    try await Task.sleep(for: .milliseconds(200))
                    return HTTPResponse(body: .bytes([UInt8](repeating: 65, count: size)))
                }
            }
            let received = Mutex(-1)
            let group = DispatchGroup()
            group.enter()
            Thread {
                let reply = try? TestHTTPClient().request(base + "/slow", timeout: 10)
                received.withLock { $0 = reply?.body.count ?? -1 }
                group.leave()
            }.start()
            XCTAssertTrue(started.wait(for: 1, timeout: 20))
            server.shutdown()
            XCTAssertEqual(group.wait(timeout: .now() + 10), .success)
            XCTAssertEqual(received.withLock { $0 }, size, "the body was cut by shutdown")
        }
    }

    func testNewConnectionsAreRefusedOnceShutdownStartsWhileRunningWorkFinishes() throws {
        let started = Counter()
        let released = Counter()
        let (server, base) = try startServer(self) { router in
            router.on("GET", "/ping", immediate: { _ in HTTPResponse(body: .bytes(Array("pong".utf8))) })
            router.on("GET", "/slow") { _ in
                started.increment()
                while released.current == 0 { try await Task.sleep(for: .milliseconds(5)) }
                return HTTPResponse(body: .bytes(Array("done".utf8)))
            }
        }
        XCTAssertEqual(try TestHTTPClient().request(base + "/ping").status, 200)
        let slow = Mutex<TestHTTPClient.Response?>(nil)
        let finished = DispatchGroup()
        finished.enter()
        Thread {
            // The request runs outside the lock: the test reads `slow` while it is in flight.
            let reply = try? TestHTTPClient().request(base + "/slow", timeout: 30)
            slow.withLock { $0 = reply }
            finished.leave()
        }.start()
        XCTAssertTrue(started.wait(for: 1, timeout: 20))
        finished.enter()
        Thread {
            server.shutdown()  // blocks until /slow has answered
            finished.leave()
        }.start()

        // While the handler still runs, a new connection gets no answer.
        var refused = false
        let deadline = Date().addingTimeInterval(20)
        while !refused, Date() < deadline {
            let reply = try? TestHTTPClient().request(base + "/ping", timeout: 2)
            refused = reply?.status != 200
            if !refused { usleep(10_000) }
        }
        XCTAssertTrue(refused, "a new connection was still served during shutdown")
        XCTAssertNil(slow.withLock { $0 }, "the running request is not answered before it is released")

        released.increment()
        XCTAssertEqual(finished.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(slow.withLock { $0?.status }, 200)
        XCTAssertEqual(slow.withLock { $0.map { String(decoding: $0.body, as: UTF8.self) } }, "done")
    }

    /// `stop()` waits off the cooperative pool. Each of more servers than the pool has threads gets
    /// stopped from its own task while a handler is in flight, and the handlers are released by
    /// another task: a shutdown that blocked a pool thread would leave no thread for the releasing
    /// task or the handlers (a regression here hangs: the very deadlock this guards against).
    func testStopFromTasksLeavesTheCooperativePoolFree() throws {
        let count = 2 * ProcessInfo.processInfo.activeProcessorCount
        let started = Counter()
        let released = Counter()
        let servers = try (0..<count).map { _ in
            try startServer(self, configure: { $0.threadPoolSize = 1 }) { router in
                router.on("GET", "/slow") { _ in
                    started.increment()
                    while released.current == 0 { try await Task.sleep(for: .milliseconds(5)) }
                    return .text("done")
                }
            }
        }
        let answered = Counter()
        for (_, base) in servers {
            Thread {
                if (try? TestHTTPClient().request(base + "/slow", timeout: 30))?.text == "done" { answered.increment() }
            }.start()
        }
        XCTAssertTrue(started.wait(for: count, timeout: 20))
        let stopped = Counter()
        for (server, _) in servers {
            Task {
                await server.stop()
                stopped.increment()
            }
        }
        usleep(100_000)  // the stops are under way
        XCTAssertEqual(stopped.current, 0, "stop() waits for the handler in flight")
        Task { released.increment() }
        XCTAssertTrue(stopped.wait(for: count, timeout: 20), "\(stopped.current) of \(count) stops returned")
        XCTAssertTrue(answered.wait(for: count, timeout: 20), "every handler's answer was sent")
    }
}
