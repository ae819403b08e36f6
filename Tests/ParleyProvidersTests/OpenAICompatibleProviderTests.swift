import Foundation
import ParleyProviders
import ParleyTestSupport
import ParleyUpstream
import XCTest

final class OpenAICompatibleProviderTests: XCTestCase {
    private let client = sharedClient
    private let apiKey = "sk-test-SECRET-0123456789"
    private let fastRetry = RetryPolicy(maxRetries: 2, maxRetryAfter: .seconds(10), backoff: .milliseconds(10))

    private func provider(_ fake: FakeUpstream, limits: UpstreamLimits = UpstreamLimits(), models: [String] = [],
                          prefill: Bool = false) -> OpenAICompatibleProvider {
        OpenAICompatibleProvider(baseURL: fake.baseURL + "/v1", apiKey: apiKey, models: models, supportsPrefill: prefill,
                                 client: client, limits: limits, retry: fastRetry)
    }

    private func run(_ fake: FakeUpstream, _ request: ChatRequest = ChatRequest(model: "smollm2", messages: userHello),
                     limits: UpstreamLimits = UpstreamLimits()) async -> StreamOutcome {
        await collect(provider(fake, limits: limits).stream(request))
    }

    private func assertNoSecret(_ outcome: StreamOutcome, file: StaticString = #filePath, line: UInt = #line) {
        if let error = outcome.error {
            XCTAssertFalse(String(describing: error).contains(apiKey), file: file, line: line)
        }
    }

    // MARK: - Captured streams over real HTTP

    func testStream1GivesTheTextUnderSeveralCutPatterns() async throws {
        let body = try Fixture.bytes("stream1.sse")
        let patterns: [[Int]] = [[], Array(stride(from: 1, to: body.count, by: 1)), Array(stride(from: 7, to: body.count, by: 7)),
                                 Array(stride(from: 0, to: body.count, by: 97)), [body.count / 2]]
        let fake = try FakeUpstream()
        for cuts in patterns {
            fake.enqueue(.eventStream(body, cuts: cuts))
            let outcome = await run(fake)
            XCTAssertNil(outcome.error)
            XCTAssertEqual(outcome.text, Fixture.stream1Text)
            XCTAssertEqual(outcome.finish, .stop)
            XCTAssertEqual(outcome.events.last, .finish(.stop))
        }
    }

    func testSendsAStreamingChatCompletionRequest() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.openAIChat(tokens: ["Hi"]))
        _ = await run(fake, ChatRequest(model: "smollm2", messages: userHello, maxTokens: 32))
        let request = try XCTUnwrap(fake.requests.first)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.path, "/v1/chat/completions")
        XCTAssertEqual(request.header("Authorization"), "Bearer \(apiKey)")
        let json = try XCTUnwrap(request.jsonBody)
        XCTAssertEqual(json["model"] as? String, "smollm2")
        XCTAssertEqual(json["stream"] as? Bool, true)
        XCTAssertEqual((json["stream_options"] as? [String: Any])?["include_usage"] as? Bool, true)
        XCTAssertEqual(json["max_tokens"] as? Int, 32)
        let messages = try XCTUnwrap(json["messages"] as? [[String: String]])
        XCTAssertEqual(messages, [["role": "system", "content": "Be brief."], ["role": "user", "content": "Hello"]])
    }

    func testNoAuthorizationHeaderWithoutKey() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.openAIChat(tokens: ["Hi"]))
        _ = await collect(OpenAICompatibleProvider(baseURL: fake.baseURL, client: client).stream(ChatRequest(model: "m", messages: userHello)))
        XCTAssertNil(fake.requests.first?.header("authorization"))
    }

    func testPrefillIsSentAsFinalAssistantMessage() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.openAIChat(tokens: [" world"]))
        let outcome = await run(fake, ChatRequest(model: "m", messages: userHello, prefill: "Hello"))
        XCTAssertEqual(outcome.text, " world")
        let messages = try XCTUnwrap(fake.requests.first?.jsonBody?["messages"] as? [[String: String]])
        XCTAssertEqual(messages.last, ["role": "assistant", "content": "Hello"])
    }

    func testLongCaptureReplayedRawEndsWithLength() async throws {
        let raw = try Fixture.bytes("raw_long.bin")
        let fake = try FakeUpstream()
        fake.enqueue(.raw(raw, cuts: Array(stride(from: 3, to: raw.count, by: 61))))
        let outcome = await run(fake)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.text.count, 6529)
        XCTAssertTrue(outcome.text.hasPrefix("The ocean. It is a vast and mysterious realm"))
        XCTAssertEqual(outcome.finish, .length)
    }

    func testToolStreamGivesOneToolCall() async throws {
        let fake = try FakeUpstream()
        let body = try Fixture.bytes("tool_stream.sse")
        fake.enqueue(.eventStream(body, cuts: Array(stride(from: 5, to: body.count, by: 13))))
        let outcome = await run(fake)
        XCTAssertEqual(outcome.toolCalls.count, 1)
        XCTAssertEqual(outcome.toolCalls[0]?.name, "get_weather")
        XCTAssertEqual(outcome.toolCalls[0]?.arguments, Fixture.toolArguments)
        XCTAssertEqual(outcome.finish, .toolCalls)
    }

    // MARK: - Endings

    func testContextOverflowStreamWithZeroEventsIsTruncated() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.raw(try Fixture.bytes("raw_ctx_stream.bin")))
        let outcome = await run(fake)
        XCTAssertEqual(outcome.providerError?.code, .upstreamTruncated)
        XCTAssertTrue(outcome.providerError?.message.contains("without a finish reason") ?? false)
    }

    func testDoneWithoutFinishReasonIsInterrupted() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.eventStream(writes: ["data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n", "data: [DONE]\n\n"]))
        let outcome = await run(fake)
        XCTAssertEqual(outcome.text, "a")
        XCTAssertEqual(outcome.providerError?.code, .upstreamInterrupted)
    }

    func testFinishReasonLength() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.openAIChat(tokens: ["a", "b"], finishReason: "length"))
        let outcome = await run(fake)
        XCTAssertEqual(outcome.events, [.text("a"), .text("b"), .finish(.length)])
    }

    func testDisconnectMidStreamIsTruncated() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.eventStream(writes: ["data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"], then: [.close]))
        let outcome = await run(fake)
        XCTAssertEqual(outcome.text, "a")
        XCTAssertEqual(outcome.providerError?.code, .upstreamTruncated)
    }

    func testMalformedJSONFrameIsProtocolError() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.eventStream(writes: ["data: {\"choices\":[{\"index\":0,\n\n"]))
        let outcome = await run(fake)
        XCTAssertEqual(outcome.providerError?.code, .upstreamProtocol)
    }

    func testInvalidUTF8IsProtocolError() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.eventStream(Array("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"".utf8) + [0xFF, 0xFE]
            + Array("\"}}]}\n\n".utf8)))
        let outcome = await run(fake)
        XCTAssertEqual(outcome.providerError?.code, .upstreamProtocol)
    }

    func testErrorObjectMidStreamIsUpstreamError() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.eventStream(writes: ["data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n",
                                           "data: {\"error\":{\"message\":\"model crashed\",\"type\":\"server_error\"}}\n\n"]))
        let outcome = await run(fake)
        XCTAssertEqual(outcome.providerError?.code, .upstreamError)
        XCTAssertTrue(outcome.providerError?.message.contains("model crashed") ?? false)
    }

    // MARK: - HTTP errors and retries

    func testUnauthorizedIsReportedWithoutRetryAndWithoutTheKey() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.json("{\"error\":{\"message\":\"Incorrect API key provided: \(apiKey)\"}}", status: 401))
        let outcome = await run(fake)
        XCTAssertEqual(outcome.providerError?.code, .upstreamUnauthorized)
        XCTAssertEqual(outcome.providerError?.status, 401)
        XCTAssertEqual(fake.requests.count, 1)
        XCTAssertTrue(outcome.providerError?.message.contains("Incorrect API key provided: [redacted]") ?? false)
        assertNoSecret(outcome)
    }

    func testNotFoundCarriesTheBodyDetail() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.json("{\"detail\":\"Not Found\"}", status: 404))
        let outcome = await run(fake)
        XCTAssertEqual(outcome.providerError?.code, .upstreamHTTPError)
        XCTAssertEqual(outcome.providerError?.status, 404)
        XCTAssertTrue(outcome.providerError?.message.hasSuffix("Not Found") ?? false)
    }

    func testContextLengthErrorMessageComesFromTheBody() async throws {
        let raw = String(decoding: try Fixture.bytes("err_ctx_nostream.txt"), as: UTF8.self)
        let body = String(raw[try XCTUnwrap(raw.range(of: "\r\n\r\n")).upperBound...])
        let fake = try FakeUpstream()
        fake.enqueue(.json(body, status: 400))
        let outcome = await run(fake)
        XCTAssertEqual(outcome.providerError?.status, 400)
        XCTAssertTrue(outcome.providerError?.message.contains("maximum context length is 2048 tokens") ?? false)
    }

    func testHugeErrorBodyIsCutInTheMessage() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.json("{\"error\":{\"message\":\"" + String(repeating: "x", count: 200_000) + "\"}}", status: 400))
        let outcome = await run(fake)
        XCTAssertEqual(outcome.providerError?.status, 400)
        XCTAssertLessThan(outcome.providerError?.message.count ?? .max, 600)
    }

    func testRateLimitIsRetriedTwiceThenReportedWithRetryAfter() async throws {
        let fake = try FakeUpstream()
        for _ in 0..<3 { fake.enqueue(.json("{\"error\":{\"message\":\"slow down\"}}", status: 429, headers: [("Retry-After", "0")])) }
        let outcome = await run(fake)
        XCTAssertEqual(outcome.providerError?.code, .rateLimited)
        XCTAssertEqual(outcome.providerError?.retryAfter, .seconds(0))
        XCTAssertEqual(fake.requests.count, 3)
    }

    func testRateLimitRetryAfterIsHonoured() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.json("{}", status: 429, headers: [("Retry-After", "1")]), .openAIChat(tokens: ["ok"]))
        let start = ContinuousClock.now
        let outcome = await run(fake)
        XCTAssertEqual(outcome.text, "ok")
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(950))
    }

    func testRetryAfterLongerThanTheCapIsReportedAtOnce() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.json("{}", status: 429, headers: [("Retry-After", "60")]))
        let outcome = await run(fake)
        XCTAssertEqual(outcome.providerError?.retryAfter, .seconds(60))
        XCTAssertEqual(fake.requests.count, 1)
    }

    func testServiceUnavailableIsRetried() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.json("{}", status: 503), .json("{}", status: 502), .openAIChat(tokens: ["ok"]))
        let outcome = await run(fake)
        XCTAssertEqual(outcome.text, "ok")
        XCTAssertEqual(fake.requests.count, 3)
    }

    func testServiceUnavailableThreeTimesIsReported() async throws {
        let fake = try FakeUpstream()
        for _ in 0..<3 { fake.enqueue(.json("{}", status: 504)) }
        let outcome = await run(fake)
        XCTAssertEqual(outcome.providerError?.code, .upstreamUnavailable)
        XCTAssertEqual(fake.requests.count, 3)
    }

    func testInternalServerErrorIsNotRetried() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(Script500.plain)
        let outcome = await run(fake)
        XCTAssertEqual(outcome.providerError?.code, .upstreamHTTPError)
        XCTAssertEqual(outcome.providerError?.message, "the model server answered HTTP 500: Internal Server Error")
        XCTAssertEqual(fake.requests.count, 1)
    }

    func testErrorAfterFirstByteIsNotRetried() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.eventStream(writes: ["data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"], then: [.close]),
                     .openAIChat(tokens: ["b"]))
        let outcome = await run(fake)
        XCTAssertEqual(outcome.providerError?.code, .upstreamTruncated)
        XCTAssertEqual(fake.requests.count, 1)
    }

    func testConnectionRefusedIsConnectionFailedWithoutTheKey() async throws {
        let fake = try FakeUpstream()
        let provider = self.provider(fake)
        fake.shutdown()  // returns once the listening socket is closed
        let outcome = await collect(provider.stream(ChatRequest(model: "m", messages: userHello)))
        XCTAssertEqual(outcome.providerError?.code, .connectionFailed)
        assertNoSecret(outcome)
    }

    // MARK: - Limits and cancellation

    func testIdleTimeout() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.eventStream(writes: ["data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"], then: [.stall]))
        let start = ContinuousClock.now
        let outcome = await run(fake, limits: UpstreamLimits(idleTimeout: .milliseconds(300)))
        XCTAssertEqual(outcome.providerError?.code, .upstreamTimeout)
        // The stall lasts until the fake is shut down: anything but the idle timeout would hang.
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(10))
    }

    func testResponseLargerThanLimit() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.openAIChat(tokens: Array(repeating: "0123456789", count: 50)))
        let outcome = await run(fake, limits: UpstreamLimits(maxResponseBytes: 2000))
        XCTAssertEqual(outcome.providerError?.code, .responseTooLarge)
    }

    func testCancellingTheConsumerClosesTheUpstreamSocketWithin100ms() async throws {
        let latency = try await medianOfThree("cancel -> upstream disconnect") {
            let fake = try FakeUpstream()
            defer { fake.shutdown() }
            fake.enqueue(.eventStream(writes: ["data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"], then: [.stall]))
            let stream = provider(fake).stream(ChatRequest(model: "m", messages: userHello))
            // The consumer is waiting for the next event when it is cancelled, as a generation would
            // be: it got the first one (a signal, not a sleep).
            let (received, signal) = AsyncStream<Void>.makeStream()
            let consumer = Task {
                for try await _ in stream { signal.yield() }
            }
            var events = received.makeAsyncIterator()
            _ = await events.next()
            let cancelledAt = ContinuousClock.now
            consumer.cancel()
            let disconnect = await fake.waitForDisconnect(timeout: .seconds(20))
            return try XCTUnwrap(disconnect) - cancelledAt
        }
        XCTAssertLessThan(latency, .milliseconds(100))
    }

    // MARK: - Models

    func testModelsFromTheServerList() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.json("{\"object\":\"list\",\"data\":[{\"id\":\"llama3\"},{\"id\":\"qwen\"}]}"))
        let models = await provider(fake).models()
        XCTAssertEqual(models.map(\.id), ["openai:llama3", "openai:qwen"])
        XCTAssertEqual(fake.requests.first?.path, "/v1/models")
    }

    func testConfiguredModelsAreListedWithoutAsking() async throws {
        let fake = try FakeUpstream()
        let models = await provider(fake, models: ["a"]).models()
        XCTAssertEqual(models, [ModelInfo(id: "openai:a", provider: "openai", label: "a")])
        XCTAssertTrue(fake.requests.isEmpty)
    }
}

private enum Script500 {
    static let plain = FakeUpstream.Script(status: 500, headers: [("Content-Type", "text/plain; charset=utf-8")],
                                           framing: .contentLength, steps: [.send(Array("Internal Server Error".utf8))])
}
