import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ParleyTestSupport
import ParleyUpstream
import XCTest

final class UpstreamClientTests: XCTestCase {
    private static func collect(_ body: AsyncThrowingStream<[UInt8], Error>) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await piece in body { bytes += piece }
        return bytes
    }

    private func expectError(_ expected: UpstreamError, file: StaticString = #filePath, line: UInt = #line,
                             _ body: () async throws -> Void) async {
        do {
            try await body()
            XCTFail("expected \(expected)", file: file, line: line)
        } catch {
            XCTAssertEqual(error as? UpstreamError, expected, file: file, line: line)
        }
    }

    // MARK: - Requests and responses

    func testSendsMethodPathHeadersAndBodyAndReturnsStatusAndLowerCasedHeaders() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.init(status: 201, headers: [("X-Thing", "yes")], steps: [.send(Array("hello ".utf8)), .send(Array("world".utf8))]))
        let client = UpstreamClient()
        let response = try await client.send(UpstreamRequest(
            url: fake.baseURL + "/v1/chat?x=1", method: "POST",
            headers: [("Authorization", "Bearer k"), ("Content-Type", "application/json")], body: Array("{\"a\":1}".utf8)))
        XCTAssertEqual(response.status, 201)
        XCTAssertEqual(response.headers["x-thing"], "yes")
        let body = try await Self.collect(response.body)
        XCTAssertEqual(String(decoding: body, as: UTF8.self), "hello world")
        let request = try XCTUnwrap(fake.requests.first)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.path, "/v1/chat?x=1")
        XCTAssertEqual(request.header("authorization"), "Bearer k")
        XCTAssertNil(request.header("expect"))
        XCTAssertEqual(request.bodyText, "{\"a\":1}")
    }

    func testBodyBytesArriveBeforeTheResponseEnds() async throws {
        // The rest of the body is held back until the first byte has been read: a client that
        // buffered the body until its end would never see it (the idle timeout then fails the test after 20 s).
        let fake = try FakeUpstream()
        let rest = FakeUpstream.Gate()
        fake.enqueue(.init(steps: [.send([65]), .wait(rest), .send([66])]))
        let client = UpstreamClient()
        let response = try await client.send(UpstreamRequest(url: fake.baseURL + "/", idleTimeout: .seconds(20)))
        var iterator = response.body.makeAsyncIterator()
        let first = try await iterator.next()
        XCTAssertEqual(first, [65])
        rest.open()
        let second = try await iterator.next()
        XCTAssertEqual(second, [66])
        let end = try await iterator.next()
        XCTAssertNil(end)
    }

    func testConnectionCloseFramingEndsTheBodyNormally() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.init(framing: .close, steps: [.send(Array("abc".utf8))]))
        let response = try await UpstreamClient().send(UpstreamRequest(url: fake.baseURL + "/"))
        let body = try await Self.collect(response.body)
        XCTAssertEqual(body, Array("abc".utf8))
    }

    func testSequentialRequestsReuseTheConnection() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.json("{}"), .json("{}"))
        let client = UpstreamClient()
        for _ in 0..<2 {
            let response = try await client.send(UpstreamRequest(url: fake.baseURL + "/"))
            _ = try await Self.collect(response.body)
        }
        XCTAssertEqual(fake.connectionCount, 1)
    }

    func testManyConcurrentTransfersAllComplete() async throws {
        let fake = try FakeUpstream { request in .json("{\"path\":\"\(request.path)\"}") }
        let client = UpstreamClient()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<20 {
                group.addTask {
                    let response = try await client.send(UpstreamRequest(url: fake.baseURL + "/\(i)"))
                    let text = String(decoding: try await Self.collect(response.body), as: UTF8.self)
                    XCTAssertEqual(text, "{\"path\":\"/\(i)\"}")
                }
            }
            try await group.waitForAll()
        }
    }

    // MARK: - Failures

    func testConnectionRefusedIsConnectionFailed() async throws {
        let fake = try FakeUpstream()
        let url = fake.baseURL + "/"
        fake.shutdown()  // returns once the listening socket is closed
        do {
            _ = try await UpstreamClient().send(UpstreamRequest(url: url))
            XCTFail("expected a failure")
        } catch {
            guard case .connectionFailed = error else { return XCTFail("\(error)") }
        }
    }

    func testConnectTimeoutWhenTheServerNeverAccepts() async throws {
        // A listener with a full accept queue drops new SYNs, so connecting hangs (all on loopback).
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(listener, pointer, length) == 0 && listen(listener, 0) == 0 && getsockname(listener, pointer, &length) == 0
            }
        }
        XCTAssertTrue(bound)
        var fillers: [Int32] = []
        defer { fillers.forEach { close($0) } }
        for _ in 0..<3 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
            }
            fillers.append(fd)
        }
        // The queue is full once the first filler's handshake completed (its socket turns writable):
        // a condition, not a sleep that a loaded machine could outrun.
        var first = pollfd(fd: fillers[0], events: Int16(POLLOUT), revents: 0)
        XCTAssertEqual(poll(&first, 1, 5_000), 1, "the first filler connected")
        let url = "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/"
        let start = ContinuousClock.now
        do {
            _ = try await UpstreamClient().send(UpstreamRequest(url: url, connectTimeout: .milliseconds(200)))
            XCTFail("expected a connect timeout")
        } catch {
            guard case .connectionFailed = error else { return XCTFail("\(error)") }
        }
        let elapsed = ContinuousClock.now - start
        XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(190))
        // The fillers keep the queue full for good: without the timeout this would hang.
        XCTAssertLessThan(elapsed, .seconds(10))
    }

    func testDisconnectMidBodyThrowsConnectionFailedFromTheBody() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.init(steps: [.send(Array("partial".utf8)), .close]))
        let response = try await UpstreamClient().send(UpstreamRequest(url: fake.baseURL + "/"))
        do {
            _ = try await Self.collect(response.body)
            XCTFail("expected a failure")
        } catch {
            guard case .connectionFailed = error as? UpstreamError else { return XCTFail("\(error)") }
        }
    }

    func testIdleTimeoutAfterHeaders() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.init(steps: [.send([1]), .stall]))
        let response = try await UpstreamClient().send(UpstreamRequest(url: fake.baseURL + "/", idleTimeout: .milliseconds(300)))
        let start = ContinuousClock.now
        await expectError(.idleTimeout) { _ = try await Self.collect(response.body) }
        // The stall lasts until the fake is shut down: anything but the idle timeout would hang.
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(10))
    }

    func testIdleTimeoutBeforeHeaders() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.noResponse)
        await expectError(.idleTimeout) {
            _ = try await UpstreamClient().send(UpstreamRequest(url: fake.baseURL + "/", idleTimeout: .milliseconds(300)))
        }
    }

    func testResponseLargerThanLimitIsAborted() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.init(steps: [.send([UInt8](repeating: 65, count: 600)), .send([UInt8](repeating: 66, count: 600))]))
        let response = try await UpstreamClient().send(UpstreamRequest(url: fake.baseURL + "/", maxResponseBytes: 1000))
        await expectError(.responseTooLarge) { _ = try await Self.collect(response.body) }
    }

    func testErrorsNeverContainRequestHeaders() async throws {
        let secret = "sk-secret-123456"
        let fake = try FakeUpstream()
        fake.enqueue(.init(steps: [.send([1]), .close]))
        let response = try await UpstreamClient().send(UpstreamRequest(url: fake.baseURL + "/", headers: [("Authorization", "Bearer \(secret)")]))
        // Both calls must fail (a success would check nothing), and neither error may carry the header.
        do {
            _ = try await Self.collect(response.body)
            XCTFail("expected the cut body to fail")
        } catch {
            XCTAssertFalse(String(describing: error).contains(secret), "\(error)")
            XCTAssertFalse(String(reflecting: error).contains(secret), "\(error)")
        }
        fake.shutdown()
        do {
            _ = try await UpstreamClient().send(UpstreamRequest(url: fake.baseURL + "/", headers: [("Authorization", "Bearer \(secret)")]))
            XCTFail("expected the closed port to fail")
        } catch {
            guard case .connectionFailed = error else { return XCTFail("\(error)") }
            XCTAssertFalse(String(describing: error).contains(secret), "\(error)")
            XCTAssertFalse(String(reflecting: error).contains(secret), "\(error)")
        }
    }

    func testHeaderWithLineBreakIsRejected() async throws {
        let fake = try FakeUpstream()
        do {
            _ = try await UpstreamClient().send(UpstreamRequest(url: fake.baseURL + "/", headers: [("X", "a\r\nInjected: 1")]))
            XCTFail("expected a failure")
        } catch {
            XCTAssertEqual(error, .other("invalid request header"))
        }
        XCTAssertTrue(fake.requests.isEmpty)
    }

    // MARK: - Cancellation closes the socket at once

    func testCancellingTheSendingTaskClosesTheSocketWithin100ms() async throws {
        let latency = try await medianOfThree("cancel -> upstream disconnect") {
            let fake = try FakeUpstream()
            defer { fake.shutdown() }
            fake.enqueue(.noResponse)
            let client = UpstreamClient()
            let task = Task { try await client.send(UpstreamRequest(url: fake.baseURL + "/")) }
            let arrived = await Deadline(.seconds(20)).wait { !fake.requests.isEmpty }
            XCTAssertTrue(arrived, "the request reached the fake upstream")
            let cancelledAt = ContinuousClock.now
            task.cancel()
            let result = await task.result
            XCTAssertThrowsError(try result.get()) { XCTAssertEqual($0 as? UpstreamError, .cancelled) }
            let disconnect = try await XCTUnwrapAsync(await fake.waitForDisconnect(timeout: .seconds(20)))
            return disconnect - cancelledAt
        }
        XCTAssertLessThan(latency, .milliseconds(100))
    }

    func testCancellingTheBodyConsumerClosesTheSocketWithin100ms() async throws {
        let latency = try await medianOfThree("cancel -> upstream disconnect") {
            let fake = try FakeUpstream()
            defer { fake.shutdown() }
            fake.enqueue(.init(steps: [.send(Array("data: x\n\n".utf8)), .stall]))
            let client = UpstreamClient()
            let response = try await client.send(UpstreamRequest(url: fake.baseURL + "/"))
            // Cancel once the consumer is surely iterating (it got the first piece), not after a sleep.
            let (started, signal) = AsyncStream<Void>.makeStream()
            let consumer = Task {
                for try await _ in response.body { signal.yield() }
            }
            var iterator = started.makeAsyncIterator()
            _ = await iterator.next()
            let cancelledAt = ContinuousClock.now
            consumer.cancel()
            let disconnect = try await XCTUnwrapAsync(await fake.waitForDisconnect(timeout: .seconds(20)))
            return disconnect - cancelledAt
        }
        XCTAssertLessThan(latency, .milliseconds(100))
    }

    func testDroppingTheBodyStreamClosesTheSocket() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.init(steps: [.send([1]), .stall]))
        let client = UpstreamClient()
        do {
            let response = try await client.send(UpstreamRequest(url: fake.baseURL + "/"))
            XCTAssertEqual(response.status, 200)
        }
        let disconnect = await fake.waitForDisconnect(timeout: .seconds(20))
        XCTAssertNotNil(disconnect)
    }

    func testDroppingTheFakeUpstreamStopsItsServer() async throws {
        var fake: FakeUpstream? = try FakeUpstream()
        let url = try XCTUnwrap(fake?.baseURL) + "/"
        fake = nil  // shutdown on deinit returns once the listening socket is closed
        do {
            _ = try await UpstreamClient().send(UpstreamRequest(url: url))
            XCTFail("expected the port to be closed")
        } catch {
            guard case .connectionFailed = error else { return XCTFail("\(error)") }
        }
    }

    private func XCTUnwrapAsync<T>(_ value: T?, file: StaticString = #filePath, line: UInt = #line) async throws -> T {
        try XCTUnwrap(value, file: file, line: line)
    }
}
