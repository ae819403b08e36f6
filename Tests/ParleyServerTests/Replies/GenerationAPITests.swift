import Foundation
import ParleyTestSupport
import XCTest

/// Sending, streaming, stop, regenerate, continue and branches, against a fake upstream that is a
/// real HTTP server on loopback.
final class GenerationAPITests: UpstreamTestCase {
    override var settings: [String: String] { ["PARLEY_OPENAI_API_KEY": "sk-secret-test-key"] }
    let model = "openai:fake"

    private func conversation() async throws -> String {
        try await parley.conversation(["model": model, "system_prompt": "You are terse."])
    }

    /// The demo model at full speed (no delay) may finish before the client attaches, so this checks
    /// what it renders and stores; that blocks stream as they close is the next test's.
    func testDemoReplyIsRenderedMarkdownAndStored() async throws {
        let id = try await parley.conversation(["model": "demo"])
        let (_, assistant) = try await parley.send(id, "Show me Markdown")
        let read = try await parley.events(assistant)
        XCTAssertEqual(read.status, 200)
        XCTAssertEqual(read.headers["content-type"], "text/event-stream; charset=utf-8")
        XCTAssertEqual(read.headers["cache-control"], "no-store", "one user's reply: no cache keeps it")
        XCTAssertEqual(read.headers["x-accel-buffering"], "no")
        XCTAssertEqual(read.events.first?.type, "snapshot")
        XCTAssertEqual(read.done?["status"] as? String, "complete")
        let stored = try await parley.message(assistant)
        let html = read.page.blocks.joined()
        XCTAssertEqual(html, stored["html"] as? String)
        for element in ["<h2>", "<ul>", "<ol>", "<table>", "<pre><code class=\"language-", "<a href="] {
            XCTAssertTrue(html.contains(element), "missing \(element)")
        }
        XCTAssertEqual(read.done?["blocks"] as? Int, read.page.blocks.count)
    }

    func testHTMLModeStreamsEachClosedBlockOnceBeforeDone() async throws {
        let tokens = ["## Title\n\n", "A paragraph ", "with **bold**.\n\n", "- one\n", "- two\n\n",
                      "| a | b |\n|---|---|\n| 1 | 2 |\n\n", "```swift\nlet x = 1\n```\n\n", "[a link](https://example.com) end."]
        // Held until the client is attached, so it sees the reply from its first byte.
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(tokens, delayMilliseconds: 5), start: attached))
        let id = try await conversation()
        let (_, assistant) = try await parley.send(id, "markdown")
        let read = try await parley.events(assistant, attached: attached)
        let snapshot = read.data(try XCTUnwrap(read.events.first))
        XCTAssertEqual(read.events.first?.type, "snapshot")
        XCTAssertEqual(snapshot["blocks"] as? [String], [], "the client attached before the first byte")
        let types = read.events.map(\.type)
        let blocks = read.events.filter { $0.type == "block" }.map(read.data)
        XCTAssertGreaterThanOrEqual(blocks.count, 4, "closed blocks streamed before done: \(types)")
        XCTAssertEqual(blocks.compactMap { $0["index"] as? Int }, Array(0..<blocks.count), "each block once, in order")
        XCTAssertTrue(types.contains("tail"), "the open end streamed as tail: \(types)")
        XCTAssertEqual(types.last, "done")
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(read.page.blocks.joined(), stored["html"] as? String)
        XCTAssertEqual(read.page.tail, "")
    }

    func testTextModeReconstructsTheUpstreamTextByteForByte() async throws {
        for cut in [1, 3, 7] {
            // Held until the client is attached: every byte of the answer reaches it as a delta.
            let attached = FakeUpstream.Gate()
            upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(UpstreamStreams.zoo, cut: cut), start: attached))
            let id = try await conversation()
            let (_, assistant) = try await parley.send(id, "zoo")
            let read = try await parley.events(assistant, mode: "text", attached: attached)
            XCTAssertEqual(read.events.first.map(read.data)?["content"] as? String, "", "attached before the first byte")
            let deltas = read.events.filter { $0.type == "delta" }.compactMap { read.data($0)["text"] as? String }
            XCTAssertEqual(deltas.joined(), UpstreamStreams.zoo.joined(), "cut every \(cut) bytes: the deltas alone")
            XCTAssertEqual(read.text, UpstreamStreams.zoo.joined(), "cut every \(cut) bytes")
            XCTAssertFalse(read.events.contains { $0.type == "block" || $0.type == "tail" })
            let usage = try XCTUnwrap(read.done?["usage"] as? [String: Any], "done.usage")
            XCTAssertEqual(usage["input_tokens"] as? Int, 7)
            XCTAssertEqual(usage["output_tokens"] as? Int, 3)
            XCTAssertEqual(read.done?["finish_reason"] as? String, "stop")
            let stored = try await parley.finished(assistant)
            XCTAssertEqual(stored["content"] as? String, UpstreamStreams.zoo.joined())
            XCTAssertEqual(stored["finish_reason"] as? String, "stop")
            XCTAssertEqual((stored["usage"] as? [String: Any])?["output_tokens"] as? Int, 3)
        }
    }

    func testUpstreamGetsTheSystemPromptAndTheBranchButNeverLeaksTheKey() async throws {
        upstream.enqueue(UpstreamStreams.complete(["first answer"]), UpstreamStreams.complete(["second"]))
        let id = try await conversation()
        let (_, first) = try await parley.send(id, "first question")
        _ = try await parley.finished(first)
        let (_, second) = try await parley.send(id, "second question")
        _ = try await parley.finished(second)
        let request = try XCTUnwrap(upstream.requests.last)
        XCTAssertEqual(request.path, "/v1/chat/completions")
        XCTAssertEqual(request.header("authorization"), "Bearer sk-secret-test-key")
        let body = try XCTUnwrap(request.jsonBody)
        XCTAssertEqual(body["model"] as? String, "fake")
        XCTAssertEqual(body["stream"] as? Bool, true)
        let messages = try XCTUnwrap(body["messages"] as? [[String: Any]])
        XCTAssertEqual(messages.map { $0["role"] as? String }, ["system", "user", "assistant", "user"])
        XCTAssertEqual(messages.map { $0["content"] as? String },
                       ["You are terse.", "first question", "first answer", "second question"])
        let everything = try await parley.call("GET", "/api/conversations/\(id)").text
            + (try await parley.call("GET", "/api/models").text)
        XCTAssertFalse(everything.contains("sk-secret"))
    }

    func testStopKeepsExactlyTheStreamedTextAndAbortsUpstreamAtOnce() async throws {
        upstream.enqueue(UpstreamStreams.stalling(after: ["Hello", " there", " 👋"]))
        let id = try await conversation()
        let (_, assistant) = try await parley.send(id, "hi")
        let partial = try await parley.events(assistant, mode: "text", until: { events in
            events.contains { $0.data.contains("👋") }
        })
        XCTAssertEqual(partial.text, "Hello there 👋")
        let before = ContinuousClock.now
        let stopped = try await parley.call("POST", "/api/messages/\(assistant)/stop")
        XCTAssertEqual(stopped.status, 200)
        XCTAssertEqual(stopped.json["status"] as? String, "stopped")
        XCTAssertEqual(stopped.json["content"] as? String, "Hello there 👋")
        let disconnect = await upstream.waitForDisconnect(timeout: .seconds(20))
        let latency = try XCTUnwrap(disconnect) - before
        // Measured from before the stop request: a few ms, but a loaded machine can hold the HTTP
        // round trip up for a while. Without the abort the call would last until the 60 s idle
        // timeout; the 100 ms bound on the cancel itself is UpstreamClientTests' and
        // OpenAICompatibleProviderTests'.
        XCTAssertLessThan(latency, .seconds(5), "upstream saw the disconnect after \(latency)")
        print("stop -> upstream disconnect: \(latency)")

        let late = try await parley.events(assistant)
        XCTAssertEqual(late.events.map(\.type), ["snapshot", "done"])
        XCTAssertEqual(late.done?["status"] as? String, "stopped")
        XCTAssertEqual(late.data(late.events[0])["content"] as? String, "Hello there 👋")

        let again = try await parley.call("POST", "/api/messages/\(assistant)/stop")
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(again.json["content"] as? String, "Hello there 👋")
    }

    func testStopBeforeTheFirstTokenLeavesAnEmptyStoppedAnswer() async throws {
        upstream.enqueue(UpstreamStreams.stalling(after: []))
        let id = try await conversation()
        let (user, assistant) = try await parley.send(id, "hi")
        let parley = try XCTUnwrap(self.parley)
        // Stop only once the subscriber is attached, so it is a live subscriber that gets `done`.
        let attached = FakeUpstream.Gate()
        let subscriber = Task { try await parley.events(assistant, attached: attached) }
        let isAttached = await attached.waitUntilOpen()
        XCTAssertTrue(isAttached, "the subscriber got its snapshot")
        let stopped = try await parley.call("POST", "/api/messages/\(assistant)/stop")
        XCTAssertEqual(stopped.json["status"] as? String, "stopped")
        XCTAssertEqual(stopped.json["content"] as? String, "")
        let read = try await subscriber.value
        XCTAssertEqual(read.done?["status"] as? String, "stopped")
        let onUser = try await parley.call("POST", "/api/messages/\(user)/stop")
        XCTAssertEqual(onUser.status, 400)
    }

    func testRegenerateMakesASiblingAndSwitchingBranchesShowsEither() async throws {
        upstream.enqueue(UpstreamStreams.complete(["one"]), UpstreamStreams.complete(["two"]))
        let id = try await conversation()
        let (_, first) = try await parley.send(id, "question")
        _ = try await parley.finished(first)
        let regenerated = try await parley.call("POST", "/api/messages/\(first)/regenerate")
        XCTAssertEqual(regenerated.status, 201)
        let second = try XCTUnwrap(regenerated.json["id"] as? String)
        _ = try await parley.finished(second)

        var shown = try await parley.call("GET", "/api/conversations/\(id)")
        var messages = try XCTUnwrap(shown.json["messages"] as? [[String: Any]])
        XCTAssertEqual(messages.last?["content"] as? String, "two")
        var siblings = try XCTUnwrap(messages.last?["siblings"] as? [String: Any])
        XCTAssertEqual(siblings["count"] as? Int, 2)
        XCTAssertEqual(siblings["index"] as? Int, 1)
        XCTAssertEqual(siblings["ids"] as? [String], [first, second])

        shown = try await parley.call("PUT", "/api/conversations/\(id)/current", json: ["message_id": first])
        XCTAssertEqual(shown.status, 200)
        messages = try XCTUnwrap(shown.json["messages"] as? [[String: Any]])
        XCTAssertEqual(messages.last?["content"] as? String, "one")
        siblings = try XCTUnwrap(messages.last?["siblings"] as? [String: Any])
        XCTAssertEqual(siblings["index"] as? Int, 0)

        let unknown = try await parley.call("PUT", "/api/conversations/\(id)/current", json: ["message_id": "nope"])
        XCTAssertEqual(unknown.status, 404)
    }

    func testEditingAUserMessageStartsABranchBesideIt() async throws {
        upstream.enqueue(UpstreamStreams.complete(["a1"]), UpstreamStreams.complete(["a2"]),
                         UpstreamStreams.complete(["a2 edited"]))
        let id = try await conversation()
        let (_, a1) = try await parley.send(id, "q1")
        _ = try await parley.finished(a1)
        let (q2, a2) = try await parley.send(id, "q2")
        _ = try await parley.finished(a2)
        let (edited, a3) = try await parley.send(id, "q2 edited", extra: ["parent_id": a1])
        _ = try await parley.finished(a3)
        let shown = try await parley.call("GET", "/api/conversations/\(id)")
        let messages = try XCTUnwrap(shown.json["messages"] as? [[String: Any]])
        XCTAssertEqual(messages.map { $0["content"] as? String }, ["q1", "a1", "q2 edited", "a2 edited"])
        XCTAssertEqual((messages[2]["siblings"] as? [String: Any])?["ids"] as? [String], [q2, edited])
        // The edited branch's context does not contain the old question.
        let contents = (upstream.requests.last?.jsonBody?["messages"] as? [[String: Any]])?.compactMap { $0["content"] as? String }
        XCTAssertEqual(contents, ["You are terse.", "q1", "a1", "q2 edited"])
    }

    func testContinueAppendsToAStoppedAnswerWithoutLosingOrRepeatingText() async throws {
        upstream.enqueue(UpstreamStreams.stalling(after: ["Once upon", " a ti"]), UpstreamStreams.complete(["me, there", " was."]))
        let id = try await conversation()
        let (_, assistant) = try await parley.send(id, "story")
        _ = try await parley.events(assistant, mode: "text", until: { $0.contains { $0.data.contains("a ti") } })
        let stopped = try await parley.call("POST", "/api/messages/\(assistant)/stop")
        let lastID = try await parley.events(assistant).lastID
        XCTAssertEqual(stopped.json["content"] as? String, "Once upon a ti")

        let continued = try await parley.call("POST", "/api/messages/\(assistant)/continue")
        XCTAssertEqual(continued.status, 200)
        XCTAssertEqual(continued.json["status"] as? String, "streaming")
        XCTAssertEqual(continued.json["id"] as? String, assistant)
        let read = try await parley.events(assistant, mode: "text")
        XCTAssertEqual(read.text, "Once upon a time, there was.")
        XCTAssertGreaterThan(read.events.compactMap { Int64($0.id) }.min() ?? 0, lastID ?? .max,
                             "ids keep growing across continue")
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(stored["content"] as? String, "Once upon a time, there was.")
        XCTAssertEqual(stored["status"] as? String, "complete")
        let sent = try XCTUnwrap(upstream.requests.last?.jsonBody?["messages"] as? [[String: Any]])
        XCTAssertEqual(sent.suffix(2).map { $0["role"] as? String }, ["assistant", "user"])
        XCTAssertEqual(sent.suffix(2).first?["content"] as? String, "Once upon a ti")
    }

    func testContinueWhileStreamingIs409AndOnAUserMessageIs400() async throws {
        upstream.enqueue(UpstreamStreams.stalling(after: ["x"]))
        let id = try await conversation()
        let (user, assistant) = try await parley.send(id, "hi")
        let busy = try await parley.call("POST", "/api/messages/\(assistant)/continue")
        XCTAssertEqual(busy.status, 409)
        XCTAssertEqual(busy.errorCode, "already_streaming")
        let status1 = try await parley.call("POST", "/api/messages/\(user)/continue").status
        XCTAssertEqual(status1, 400)
        let status2 = try await parley.call("POST", "/api/messages/\(user)/regenerate").status
        XCTAssertEqual(status2, 400)
        _ = try await parley.call("POST", "/api/messages/\(assistant)/stop")
    }

    func testTooManyLiveRepliesIs429() async throws {
        let limited = try startParley(upstream: upstream, ["PARLEY_MAX_GENERATIONS_PER_USER": "1"])
        upstream.enqueue(UpstreamStreams.stalling(after: ["x"]))
        let id = try await limited.conversation(["model": model])
        let (_, first) = try await limited.send(id, "one")
        let refused = try await limited.call("POST", "/api/conversations/\(id)/messages", json: ["content": "two"])
        XCTAssertEqual(refused.status, 429)
        XCTAssertEqual(refused.errorCode, "too_many_generations")
        XCTAssertEqual(refused.headers["retry-after"], "1")
        _ = try await limited.call("POST", "/api/messages/\(first)/stop")
        upstream.enqueue(UpstreamStreams.complete(["ok"]))
        let accepted = try await limited.call("POST", "/api/conversations/\(id)/messages", json: ["content": "three"])
        XCTAssertEqual(accepted.status, 201)
    }

    func testAReplyOverTheSizeLimitIsCutAndMarkedLength() async throws {
        let limited = try startParley(upstream: upstream, ["PARLEY_MAX_REPLY_BYTES": "10"])
        upstream.enqueue(UpstreamStreams.complete(["12345", "678é", "90", "more"]))
        let id = try await limited.conversation(["model": model])
        let (_, assistant) = try await limited.send(id, "long")
        let stored = try await limited.finished(assistant)
        XCTAssertEqual(stored["content"] as? String, "12345678é")
        XCTAssertEqual(stored["finish_reason"] as? String, "length")
        XCTAssertEqual(stored["status"] as? String, "complete")

        // The cap is per run: a reply cut for length can be continued.
        upstream.enqueue(UpstreamStreams.complete(["0", " end"]))
        let continued = try await limited.call("POST", "/api/messages/\(assistant)/continue")
        XCTAssertEqual(continued.status, 200)
        let extended = try await limited.finished(assistant)
        XCTAssertEqual(extended["content"] as? String, "12345678é0 end")
        XCTAssertEqual(extended["finish_reason"] as? String, "stop")
    }

    func testASecondSubscriberSeesTheSameStream() async throws {
        let tokens = (0..<40).map { "w\($0) " }
        // The stream starts once both subscribers are attached, so both see every delta.
        let first = FakeUpstream.Gate()
        let second = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.gated(UpstreamStreams.complete(tokens, delayMilliseconds: 2),
                                                                     start: second), start: first))
        let id = try await conversation()
        let (_, assistant) = try await parley.send(id, "hi")
        let parley = try XCTUnwrap(self.parley)
        async let a = parley.events(assistant, mode: "text", attached: first)
        async let b = parley.events(assistant, mode: "text", attached: second)
        for read in try await [a, b] {
            XCTAssertEqual(read.events.first.map(read.data)?["content"] as? String, "", "attached before the first byte")
            let deltas = read.events.filter { $0.type == "delta" }.compactMap { read.data($0)["text"] as? String }
            XCTAssertEqual(deltas.joined(), tokens.joined())
        }
    }

    func testSendDuringShutdownIs503ShuttingDown() async throws {
        let id = try await conversation()
        // The window between the generations' shutdown and the HTTP server's: the API still answers.
        await parley.app.generations.shutdown()
        let refused = try await parley.call("POST", "/api/conversations/\(id)/messages", json: ["content": "late"])
        XCTAssertEqual(refused.status, 503, refused.text)
        XCTAssertEqual(refused.errorCode, "shutting_down")
        XCTAssertEqual(refused.headers["retry-after"], "5")
        XCTAssertTrue(upstream.requests.isEmpty, "nothing was sent upstream")
    }
}
