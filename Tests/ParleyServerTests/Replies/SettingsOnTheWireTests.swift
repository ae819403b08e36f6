import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// Settings whose effect is only visible on the wire: what the fake upstream receives, and what an
/// idle event stream sends.
final class SettingsOnTheWireTests: XCTestCase {
    /// Sends a message whose reply (enqueued by the caller) streams `text` and stalls; stops it once
    /// `text` arrived and returns the reply's id.
    private func stoppedReply(_ parley: TestParley, model: String, text: String) async throws -> String {
        let id = try await parley.conversation(["model": model, "system_prompt": "Be brief."])
        let (_, assistant) = try await parley.send(id, "story")
        _ = try await parley.events(assistant, mode: "text", until: { events in
            StreamRead(status: 200, headers: [:], events: events, raw: "").text == text
        })
        let stopped = try await parley.call("POST", "/api/messages/\(assistant)/stop")
        XCTAssertEqual(stopped.json["content"] as? String, text)
        return assistant
    }

    func testOpenAIPrefillSendsThePartialAnswerAsTheFinalAssistantMessage() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream, ["PARLEY_OPENAI_PREFILL": "1"])
        upstream.enqueue(UpstreamStreams.stalling(after: ["Once upon", " a ti"]), UpstreamStreams.complete(["me."]))
        let assistant = try await stoppedReply(parley, model: "openai:fake", text: "Once upon a ti")
        let continued = try await parley.call("POST", "/api/messages/\(assistant)/continue")
        XCTAssertEqual(continued.status, 200, continued.text)
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(stored["content"] as? String, "Once upon a time.")

        let sent = try XCTUnwrap(upstream.requests.last?.jsonBody?["messages"] as? [[String: Any]])
        XCTAssertEqual(sent.map { $0["role"] as? String }, ["system", "user", "assistant"],
                       "no hidden instruction turn: the server continues the assistant message")
        XCTAssertEqual(sent.last?["content"] as? String, "Once upon a ti")
    }

    func testAnthropicGetsTheConfiguredMaxTokensAndContinueSendsTheTrimmedPrefill() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(["PARLEY_ANTHROPIC_BASE_URL": upstream.baseURL, "PARLEY_ANTHROPIC_API_KEY": "test-key",
                                      "PARLEY_ANTHROPIC_MODELS": "claude-fake", "PARLEY_ANTHROPIC_MAX_TOKENS": "777"])
        var partial = FakeUpstream.Script.anthropicMessages(tokens: ["Once upon", " a "])
        // Cut before content_block_stop: the reply stalls after the two tokens.
        let stop = try XCTUnwrap(partial.steps.firstIndex { step in
            if case .send(let bytes) = step { String(decoding: bytes, as: UTF8.self).contains("content_block_stop") } else { false }
        })
        partial.steps = Array(partial.steps[..<stop]) + [.stall]
        upstream.enqueue(partial, .anthropicMessages(tokens: [" time", ", the end."]))
        let assistant = try await stoppedReply(parley, model: "anthropic:claude-fake", text: "Once upon a ")
        let continued = try await parley.call("POST", "/api/messages/\(assistant)/continue")
        XCTAssertEqual(continued.status, 200, continued.text)
        let stored = try await parley.finished(assistant)
        // Anthropic refuses a prefill ending in whitespace: it is trimmed, and the model's leading
        // space dropped, so the stored text reads on without a doubled or missing space.
        XCTAssertEqual(stored["content"] as? String, "Once upon a time, the end.")
        XCTAssertEqual(stored["status"] as? String, "complete")

        let requests = upstream.requests.filter { $0.method == "POST" }
        XCTAssertEqual(requests.count, 2)
        for request in requests {
            XCTAssertEqual(request.path, "/v1/messages")
            XCTAssertEqual(request.header("x-api-key"), "test-key")
            XCTAssertEqual(request.header("anthropic-version"), "2023-06-01")
            XCTAssertEqual(request.jsonBody?["max_tokens"] as? Int, 777, "PARLEY_ANTHROPIC_MAX_TOKENS")
            XCTAssertEqual(request.jsonBody?["system"] as? String, "Be brief.")
        }
        let sent = try XCTUnwrap(requests.last?.jsonBody?["messages"] as? [[String: Any]])
        XCTAssertEqual(sent.map { $0["role"] as? String }, ["user", "assistant"])
        XCTAssertEqual(sent.last?["content"] as? String, "Once upon a")
    }

    func testAnthropicMaxTokensDefaultsTo4096() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(["PARLEY_ANTHROPIC_BASE_URL": upstream.baseURL, "PARLEY_ANTHROPIC_API_KEY": "test-key",
                                      "PARLEY_ANTHROPIC_MODELS": "claude-fake"])
        upstream.enqueue(.anthropicMessages(tokens: ["ok"]))
        let id = try await parley.conversation(["model": "anthropic:claude-fake"])
        let (_, assistant) = try await parley.send(id, "hi")
        _ = try await parley.finished(assistant)
        XCTAssertEqual(upstream.requests.last?.jsonBody?["max_tokens"] as? Int, 4096)
    }

    /// An idle message stream gets `: ping` about every PARLEY_HEARTBEAT_INTERVAL, never much more often.
    func testPingsOnAnIdleMessageStreamComeAboutTheIntervalApart() async throws {
        let interval = 0.25
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream, ["PARLEY_HEARTBEAT_INTERVAL": String(interval)])
        upstream.enqueue(UpstreamStreams.stalling(after: ["waiting"]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "hi")
        let url = parley.base + "/api/messages/\(assistant)/stream?mode=text"
        let pings = 6
        let arrivals = try await Blocking.run { () -> [Double] in
            let start = ContinuousClock.now
            var times: [Double] = []
            _ = try TestHTTPClient().stream(url, until: { bytes in
                let seen = String(decoding: bytes, as: UTF8.self).components(separatedBy: ": ping\n\n").count - 1
                while times.count < seen { times.append((ContinuousClock.now - start).seconds) }
                return seen >= pings
            }, timeout: 20)
            return times
        }
        XCTAssertEqual(arrivals.count, pings)
        let gaps = zip(arrivals.dropFirst(), arrivals).map { $0 - $1 }
        let median = gaps.sorted()[gaps.count / 2]
        print("ping gaps at an interval of \(interval) s: \(gaps.map { String(format: "%.3f", $0) })")
        // The timer ticks every half interval and pings a stream idle for a whole one: 1 to 1.5
        // intervals apart on a quiet machine; a loaded one delays some (and so shortens the next gap).
        XCTAssertGreaterThanOrEqual(median, interval * 0.8, "pings too frequent: \(gaps)")
        XCTAssertLessThanOrEqual(median, interval * 2.5, "pings too rare: \(gaps)")
        _ = try await parley.call("POST", "/api/messages/\(assistant)/stop")
    }
}

private extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
