import Foundation
import ParleyTestSupport
import XCTest

/// Every upstream fault ends the reply with a clear status and error, keeps what was streamed, and
/// leaves the server serving. The fake upstream is a real HTTP server on loopback.
final class UpstreamFaultTests: XCTestCase {
    var upstream: FakeUpstream!
    var parley: TestParley!

    override func setUp() async throws {
        upstream = try startUpstream()
        parley = try startParley(upstream: upstream, settings())
    }

    /// The idle timeout is the default one except where a test is about it: 0.5 s everywhere would
    /// turn any half-second hiccup of a loaded machine into a spurious `upstream_timeout`.
    private func settings(idleTimeout: String? = nil) -> [String: String] {
        var settings = ["PARLEY_OPENAI_API_KEY": "sk-never-shown", "PARLEY_UPSTREAM_MAX_BYTES": "20000"]
        settings["PARLEY_UPSTREAM_IDLE_TIMEOUT"] = idleTimeout
        return settings
    }

    override func tearDown() async throws {
        // XCTest keeps test case instances for the whole run: let the servers go now (the teardown
        // blocks registered by `startUpstream` and `startParley` stop them).
        parley = nil
        upstream = nil
    }

    /// Sends one message, reads its stream to the end, and checks the common promises of a fault.
    @discardableResult
    private func reply(expectStatus status: String, code: String, content: String = "",
                       file: StaticString = #filePath, line: UInt = #line) async throws -> [String: Any] {
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "hi")
        let read = try await parley.events(assistant)
        let error = read.events.first { $0.type == "error" }.map(read.data)
        XCTAssertEqual(error?["code"] as? String, code, "error event", file: file, line: line)
        XCTAssertFalse((error?["message"] as? String ?? "").isEmpty, "a message for people", file: file, line: line)
        XCTAssertEqual(read.done?["status"] as? String, status, file: file, line: line)
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(stored["status"] as? String, status, file: file, line: line)
        XCTAssertEqual(stored["content"] as? String, content, "nothing streamed is lost", file: file, line: line)
        XCTAssertEqual((stored["error"] as? [String: Any])?["code"] as? String, code, file: file, line: line)
        let health = try await parley.call("GET", "/api/health")
        XCTAssertEqual(health.status, 200, "the server keeps serving", file: file, line: line)
        XCTAssertFalse(read.raw.contains("sk-never-shown"), file: file, line: line)
        return stored
    }

    func testUnauthorizedIsReportedWithoutTheKey() async throws {
        upstream.enqueue(.json("{\"error\":{\"message\":\"Incorrect API key provided: sk-never-shown\"}}", status: 401))
        let stored = try await reply(expectStatus: "failed", code: "upstream_unauthorized")
        XCTAssertFalse("\(stored)".contains("sk-never-shown"))
    }

    func testRateLimitIsRetriedHonouringRetryAfterThenReported() async throws {
        let limited = FakeUpstream.Script.json("{\"error\":{\"message\":\"slow down\"}}", status: 429,
                                               headers: [("Retry-After", "0")])
        upstream.enqueue(limited, limited, limited)
        try await reply(expectStatus: "failed", code: "rate_limited")
        XCTAssertEqual(upstream.requests.count, 3, "two retries, then the error as it came")
    }

    func testServerErrorIsReported() async throws {
        upstream.enqueue(.json("{\"error\":{\"message\":\"boom\"}}", status: 500))
        try await reply(expectStatus: "failed", code: "upstream_http_error")
    }

    func testA503IsRetriedAndTheRetrySucceeds() async throws {
        upstream.enqueue(.json("{}", status: 503), UpstreamStreams.complete(["fine"]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "hi")
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(stored["status"] as? String, "complete")
        XCTAssertEqual(stored["content"] as? String, "fine")
    }

    func testConnectionRefusedIsReported() async throws {
        await parley.stop()
        parley = try startParley(["PARLEY_OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "PARLEY_OPENAI_MODELS": "fake"])
        try await reply(expectStatus: "failed", code: "connection_failed")
    }

    func testDisconnectMidStreamKeepsTheTextAndFails() async throws {
        upstream.enqueue(.eventStream(writes: [UpstreamStreams.chunk("Half an "), UpstreamStreams.chunk("answ")],
                                      then: [.close]))
        try await reply(expectStatus: "failed", code: "upstream_truncated", content: "Half an answ")
    }

    func testZeroEventStreamOnContextOverflowIsATruncation() async throws {
        // llama.cpp on context overflow: 200, SSE headers, and no event at all.
        upstream.enqueue(.eventStream([]))
        try await reply(expectStatus: "failed", code: "upstream_truncated")
    }

    func testMalformedJSONFrameIsAProtocolError() async throws {
        upstream.enqueue(.eventStream(writes: [UpstreamStreams.chunk("ok "), "data: {\"choices\":[{\"delta\":\n\n"]))
        try await reply(expectStatus: "failed", code: "upstream_protocol", content: "ok ")
    }

    func testErrorObjectMidStreamIsReported() async throws {
        upstream.enqueue(.eventStream(writes: [UpstreamStreams.chunk("partial"),
                                               "data: {\"error\":{\"message\":\"model crashed\",\"type\":\"server_error\"}}\n\n"]))
        try await reply(expectStatus: "failed", code: "upstream_error", content: "partial")
    }

    func testAStallEndsWithTheIdleTimeout() async throws {
        await parley.stop()
        parley = try startParley(upstream: upstream, settings(idleTimeout: "0.5"))
        upstream.enqueue(UpstreamStreams.stalling(after: ["waiting"]))
        try await reply(expectStatus: "failed", code: "upstream_timeout", content: "waiting")
    }

    func testANeverEndingStreamIsCutAtTheMaximumSize() async throws {
        let chunk = UpstreamStreams.chunk(String(repeating: "z", count: 100))
        upstream.enqueue(.eventStream(writes: Array(repeating: chunk, count: 1000)))
        let stored = try await reply(expectStatus: "failed", code: "response_too_large",
                                     content: String(repeating: "z", count: 100 * (20000 / chunk.utf8.count)))
        XCTAssertLessThan((stored["content"] as? String)?.utf8.count ?? .max, 20000)
    }

    func testInvalidUTF8IsAProtocolError() async throws {
        let good = Array(UpstreamStreams.chunk("fine ").utf8)
        let bad = Array("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"".utf8) + [0xC3, 0x28]
            + Array("\"}}]}\n\n".utf8)
        upstream.enqueue(.eventStream(good + bad))
        try await reply(expectStatus: "failed", code: "upstream_protocol", content: "fine ")
    }

    func testDoneWithoutFinishReasonIsAnInterruption() async throws {
        upstream.enqueue(.eventStream(writes: [UpstreamStreams.chunk("cut"), "data: [DONE]\n\n"]))
        try await reply(expectStatus: "interrupted", code: "upstream_interrupted", content: "cut")
    }
}
