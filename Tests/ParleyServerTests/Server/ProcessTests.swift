import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// The executable: start-up line, graceful shutdown, and a crash (`kill -9`) mid-reply.
final class ProcessTests: XCTestCase {
    var directory: URL!

    override func setUp() async throws {
        directory = TestFiles.directory("parley-process")
    }

    private func settings(_ extra: [String: String] = [:]) -> [String: String] {
        // Titles off: a title request would take the fake upstream's next scripted answer.
        ["PARLEY_PORT": "0", "PARLEY_DB": directory.appendingPathComponent("parley.db").path, "PARLEY_TITLES": "off",
         "PARLEY_PUBLIC": TestParley.repositoryRoot.appendingPathComponent("Public").path].merging(extra) { $1 }
    }

    private func call(_ base: String, _ method: String, _ path: String, _ json: [String: Any]? = nil) async throws
        -> [String: Any] {
        let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) }
        let headers = body == nil ? [] : [("Content-Type", "application/json")]
        let reply = try await Blocking.run {
            try TestHTTPClient().request(method, base + path, headers: headers, body: body).body
        }
        return (try? JSONSerialization.jsonObject(with: Data(reply))) as? [String: Any] ?? [:]
    }

    func testFlagsWinOverTheEnvironmentAndBadValuesExitWithAMessage() async throws {
        let process = try startProcess(environment: settings(["PARLEY_HOST": "0.0.0.0"]), arguments: ["--host", "127.0.0.1"])
        XCTAssertTrue(process.base.hasPrefix("http://127.0.0.1:"), process.base)
        process.kill(SIGTERM)
        XCTAssertEqual(process.process.terminationStatus, 0, "SIGTERM is a clean shutdown")

        let bad = try SpawnedProcess(executable: ParleyProcess.executable, arguments: ["--port", "seventy"],
                                   environment: ParleyProcess.environment([:]))
        let exited = await Deadline(.seconds(10)).wait { !bad.isRunning }
        if !exited {
            XCTFail("parley --port seventy did not exit within 10 s")
            bad.send(SIGKILL)
        }
        bad.waitUntilExit()
        XCTAssertEqual(bad.terminationStatus, 2)
        XCTAssertTrue(String(decoding: bad.standardError.readDataToEndOfFile(), as: UTF8.self)
            .contains("PARLEY_PORT"))
    }

    /// The helper itself: a server that cannot start is an error carrying its stderr (it used to be
    /// an XCTSkip with stderr thrown away, so a start-up crash passed as skipped).
    func testAProcessThatCannotStartIsAnErrorWithItsStandardError() throws {
        XCTAssertThrowsError(try ParleyProcess(environment: settings(["PARLEY_MAX_GENERATIONS": "none"]))) { error in
            XCTAssertFalse(error is XCTSkip)
            XCTAssertTrue("\(error)".contains("exit status 2"), "\(error)")
            XCTAssertTrue("\(error)".contains("PARLEY_MAX_GENERATIONS=none"), "stderr is in the error: \(error)")
        }
    }

    func testKillNineMidReplyLosesAtMostOneFlushIntervalAndContinueWorks() async throws {
        let upstream = try startUpstream()
        let tokens = (0..<300).map { "t\($0) " }
        upstream.enqueue(UpstreamStreams.complete(tokens, delayMilliseconds: 10))
        let provider = ["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1", "PARLEY_OPENAI_MODELS": "fake",
                        "PARLEY_FLUSH_INTERVAL_MS": "200"]
        var parley = try startProcess(environment: settings(provider))
        let conversation = try await call(parley.base, "POST", "/api/conversations", ["model": "openai:fake"])
        let conversationID = try XCTUnwrap(conversation["id"] as? String)
        let turn = try await call(parley.base, "POST", "/api/conversations/\(conversationID)/messages", ["content": "go"])
        let assistant = try XCTUnwrap((turn["assistant_message"] as? [String: Any])?["id"] as? String)

        // Read the reply as a browser would until about a third of it has arrived, then kill the server.
        let url = parley.base + "/api/messages/\(assistant)/stream?mode=text"
        let seen = try await Blocking.run {
            try TestHTTPClient().stream(url, until: { bytes in
                String(decoding: bytes, as: UTF8.self).contains("t100 ")
            }, timeout: 20).body
        }
        parley.kill()
        var decoder = SSEDecoder()
        let received = StreamRead(status: 200, headers: [:], events: try decoder.decode(seen), raw: "").text
        XCTAssertTrue(tokens.joined().hasPrefix(received))
        XCTAssertGreaterThan(received.utf8.count, 300)

        // A restart that crashes fails here with its standard error (never a skip).
        parley = try startProcess(environment: settings(provider))
        let stored = try await call(parley.base, "GET", "/api/messages/\(assistant)")
        XCTAssertEqual(stored["status"] as? String, "interrupted")
        let content = try XCTUnwrap(stored["content"] as? String)
        XCTAssertTrue(tokens.joined().hasPrefix(content), "what was stored is what was streamed")
        let lost = max(0, received.utf8.count - content.utf8.count)
        // Tokens arrive every 10 ms, about 5 bytes each: one 200 ms flush interval is about 100 bytes.
        print("kill -9: client had \(received.utf8.count) bytes, store kept \(content.utf8.count), lost \(lost)")
        // (Bound with slack for a loaded machine, where a flush can start late.)
        XCTAssertLessThanOrEqual(lost, 300, "at most about one flush interval of text is lost")
        XCTAssertGreaterThan(content.utf8.count, 0)

        upstream.enqueue(UpstreamStreams.complete(["and the rest."]))
        let continued = try await call(parley.base, "POST", "/api/messages/\(assistant)/continue")
        XCTAssertEqual(continued["status"] as? String, "streaming")
        var final: [String: Any] = [:]
        let ended = try await Deadline(.seconds(20)).wait(every: .milliseconds(20)) {
            final = try await call(parley.base, "GET", "/api/messages/\(assistant)")
            return final["status"] as? String != "streaming"
        }
        XCTAssertTrue(ended, "the continued reply ended: \(final)")
        XCTAssertEqual(final["status"] as? String, "complete")
        XCTAssertEqual(final["content"] as? String, content + "and the rest.")
        parley.kill(SIGTERM)
    }

    /// The API keys reach the upstream and nothing else: not standard output, not the log, not the
    /// API, even when the upstream echoes them back in an error.
    func testAPIKeysAreNeverLoggedEvenWhenTheUpstreamEchoesThem() async throws {
        let openAIKey = "sk-test-NEVER-LOG-0123456789"
        let anthropicKey = "sk-ant-NEVER-LOG-9876543210"
        let upstream = try startUpstream()
        // Each error quotes the key back, as real servers do ("Incorrect API key provided: sk-…").
        upstream.enqueue(
            .json("{\"error\":{\"message\":\"Incorrect API key provided: \(openAIKey)\"}}", status: 401),
            .json("{\"error\":{\"message\":\"boom for Bearer \(openAIKey)\"}}", status: 500),
            .eventStream(writes: [UpstreamStreams.chunk("partial"),
                                  "data: {\"error\":{\"message\":\"key \(openAIKey) revoked\"}}\n\n"]),
            .json("{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key \(anthropicKey)\"}}",
                  status: 401))
        let parley = try startProcess(environment: settings([
            "PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1", "PARLEY_OPENAI_MODELS": "fake",
            "PARLEY_OPENAI_API_KEY": openAIKey,
            "PARLEY_ANTHROPIC_BASE_URL": upstream.baseURL, "PARLEY_ANTHROPIC_API_KEY": anthropicKey,
            "PARLEY_ANTHROPIC_MODELS": "claude-fake",
        ]))
        var answers = ""
        let expected = [("openai:fake", "upstream_unauthorized"), ("openai:fake", "upstream_http_error"),
                        ("openai:fake", "upstream_error"), ("anthropic:claude-fake", "upstream_unauthorized")]
        for (model, code) in expected {
            let conversation = try await call(parley.base, "POST", "/api/conversations", ["model": model])
            let id = try XCTUnwrap(conversation["id"] as? String)
            let turn = try await call(parley.base, "POST", "/api/conversations/\(id)/messages", ["content": "hi"])
            let assistant = try XCTUnwrap((turn["assistant_message"] as? [String: Any])?["id"] as? String, "\(turn)")
            var stored: [String: Any] = [:]
            let ended = try await Deadline(.seconds(20)).wait(every: .milliseconds(20)) {
                stored = try await call(parley.base, "GET", "/api/messages/\(assistant)")
                return stored["status"] as? String != "streaming"
            }
            XCTAssertTrue(ended, "\(model): the reply ended")
            XCTAssertEqual((stored["error"] as? [String: Any])?["code"] as? String, code, "\(model): \(stored)")
            let url = parley.base + "/api/messages/\(assistant)/stream?mode=text"
            answers += "\(stored)" + (try await Blocking.run { try TestHTTPClient().stream(url, until: { _ in false }, timeout: 20).text })
        }
        XCTAssertEqual(upstream.requests.first?.header("authorization"), "Bearer \(openAIKey)", "the key is used")
        XCTAssertEqual(upstream.requests.last?.header("x-api-key"), anthropicKey)
        parley.kill(SIGTERM)
        for key in [openAIKey, anthropicKey] {
            XCTAssertFalse(parley.output.contains(key), "stdout: \(parley.output)")
            XCTAssertFalse(parley.errors.contains(key), "stderr: \(parley.errors)")
            XCTAssertFalse(answers.contains(key), "API: \(answers)")
        }
        XCTAssertEqual(parley.output.split(separator: "\n").count, 1, "stdout is the listening line only: \(parley.output)")
    }
}
