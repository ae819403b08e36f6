import Foundation
import ParleyHTTP
import Synchronization
import XCTest

/// A started server on 127.0.0.1 with a free port, shut down by the test's teardown.
func startServer(
    _ testCase: XCTestCase, configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    routes: (inout Router) -> Void
) throws -> (server: HTTPServer, base: String) {
    var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
    configure(&configuration)
    var router = Router()
    routes(&router)
    let server = HTTPServer(configuration: configuration, router: router)
    try server.start()
    testCase.addTeardownBlock { server.shutdown() }
    return (server, "http://127.0.0.1:\(server.port)")
}

/// Runs `count` bodies on their own threads (blocking clients) and waits for all of them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 256 * 1024
        thread.start()
    }
    group.wait()
}

/// Thread-safe counter for callbacks.
final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var current: Int { value.withLock { $0 } }

    /// Polls until the count reaches `target` or `timeout` passes.
    func wait(for target: Int, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while current < target {
            if Date() > deadline { return false }
            usleep(2_000)
        }
        return true
    }
}

/// Process CPU time (user + system) in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}
