import Foundation
import ParleyTestSupport
import XCTest

/// Limits and rendering details of a generation that need their own server settings.
final class GenerationLimitTests: XCTestCase {
    var upstream: FakeUpstream!

    override func setUp() async throws {
        upstream = try startUpstream()
    }

    override func tearDown() async throws {
        // XCTest keeps test case instances for the whole run: let the server go now.
        upstream = nil
    }

    /// A Parley in front of this test's upstream, stopped when the test ends.
    private func parley(_ settings: [String: String]) throws -> TestParley {
        try startParley(upstream: upstream, settings)
    }

    func testFastChunksAreCoalescedIntoFramesButTheFirstIsNotDelayed() async throws {
        let parley = try parley(["PARLEY_FRAME_INTERVAL_MS": "150"])
        // 60 tokens 5 ms apart: about 300 ms of stream, so about 3 frames of 150 ms.
        let tokens = (0..<60).map { "k\($0) " }
        // The upstream holds its first token until the client is attached.
        let attached = FakeUpstream.Gate()
        var steps: [FakeUpstream.Script.Step] = [.wait(attached)]
        for token in tokens {
            steps += [.send(UpstreamStreams.chunk(token)), .sleep(milliseconds: 5)]
        }
        steps.append(.send(UpstreamStreams.finish()))
        upstream.enqueue(FakeUpstream.Script(headers: [("Content-Type", "text/event-stream")], steps: steps))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        let read = try await parley.events(assistant, mode: "text", attached: attached)
        XCTAssertEqual(read.text, tokens.joined())
        let deltas = read.events.filter { $0.type == "delta" }
        // About 3 frames on a quiet machine; a loaded one stretches the stream, never to 60 writes.
        XCTAssertLessThanOrEqual(deltas.count, 15, "one write per frame, not one per token")
        XCTAssertGreaterThanOrEqual(deltas.count, 2)
        XCTAssertEqual(read.data(deltas[0])["text"] as? String, "k0 ", "the first chunk goes out alone, at once")
    }

    func testAFrameIntervalOfZeroSendsEveryChunk() async throws {
        let parley = try parley(["PARLEY_FRAME_INTERVAL_MS": "0"])
        let tokens = (0..<20).map { "z\($0) " }
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(tokens, delayMilliseconds: 5), start: attached))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        let read = try await parley.events(assistant, mode: "text", attached: attached)
        XCTAssertEqual(read.text, tokens.joined())
        XCTAssertGreaterThanOrEqual(read.events.filter { $0.type == "delta" }.count, 15,
                                    "nearly every chunk is its own write")
    }

    func testTheGlobalCapOnLiveRepliesIs429() async throws {
        let parley = try parley(["PARLEY_MAX_GENERATIONS": "1", "PARLEY_MAX_GENERATIONS_PER_USER": "5"])
        upstream.enqueue(UpstreamStreams.stalling(after: ["x"]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, first) = try await parley.send(id, "one")
        let other = try await parley.conversation(["model": "openai:fake"])
        let refused = try await parley.call("POST", "/api/conversations/\(other)/messages", json: ["content": "two"])
        XCTAssertEqual(refused.status, 429)
        XCTAssertEqual(refused.errorCode, "too_many_generations")
        XCTAssertEqual(refused.headers["retry-after"], "1")
        _ = try await parley.call("POST", "/api/messages/\(first)/stop")
    }

    func testTheContextIsTrimmedFromTheOldestTurnsToTheBudget() async throws {
        let parley = try parley(["PARLEY_CONTEXT_BUDGET_CHARS": "30"])
        upstream.enqueue(UpstreamStreams.complete(["answer one"]), UpstreamStreams.complete(["answer two"]),
                         UpstreamStreams.complete(["three"]))
        let id = try await parley.conversation(["model": "openai:fake", "system_prompt": "sys"])
        for question in ["question one", "question two", "question three"] {
            let (_, assistant) = try await parley.send(id, question)
            _ = try await parley.finished(assistant)
        }
        let sent = try XCTUnwrap(upstream.requests.last?.jsonBody?["messages"] as? [[String: Any]])
        // 30 characters: "question three" (14) and "answer two" (10) fit; "question two" would not.
        // A history never starts with an assistant turn, so "answer two" goes too.
        XCTAssertEqual(sent.compactMap { $0["content"] as? String }, ["sys", "question three"])
    }

    func testALateLinkDefinitionIsReconciledByTheFinalPatch() async throws {
        let parley = try parley([:])
        let tokens = ["See [the docs][d].\n", "\n", "Second paragraph.\n", "\n", "Third.\n", "\n",
                      "[d]: https://example.com/docs\n"]
        // Held until the client is attached: a client arriving after the end gets snapshot + done, no patch.
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(tokens, delayMilliseconds: 30), start: attached))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        let read = try await parley.events(assistant, attached: attached)
        let patch = try XCTUnwrap(read.done?["patch"] as? [[String: Any]])
        XCTAssertEqual(patch.first?["index"] as? Int, 0)
        XCTAssertTrue((patch.first?["html"] as? String)?.contains("href=\"https://example.com/docs\"") ?? false)
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(read.page.blocks.joined(), stored["html"] as? String)
    }

    func testModelOutputIsRenderedSafely() async throws {
        let parley = try parley([:])
        let tokens = ["<script>alert(1)</script>\n\n", "[x](javascript:alert(1)) ", "<img src=x onerror=alert(1)>\n"]
        upstream.enqueue(UpstreamStreams.complete(tokens))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "<b onclick=x>hi</b>")
        _ = try await parley.finished(assistant)
        let shown = try await parley.call("GET", "/api/conversations/\(id)")
        let messages = try XCTUnwrap(shown.json["messages"] as? [[String: Any]])
        XCTAssertEqual(messages.first?["content"] as? String, "<b onclick=x>hi</b>")
        XCTAssertNil(messages.first?["html"], "a user message is plain text, never HTML")
        for message in messages where message["role"] as? String == "assistant" {
            let html = try XCTUnwrap(message["html"] as? String)
            for bad in ["<script", "onerror", "onclick", "javascript:", "style="] {
                XCTAssertFalse(html.contains(bad), "\(bad) in \(html)")
            }
        }
    }
}
