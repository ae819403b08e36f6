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
}
