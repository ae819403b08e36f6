import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// A reasoning model's thinking streams before its answer as `reasoning` events, is stored beside the
/// answer, survives reconnects, stop and continue, and is never sent back upstream.
final class ReasoningTests: UpstreamTestCase {
    override var settings: [String: String] { ["PARLEY_FRAME_INTERVAL_MS": "5"] }
    let thoughts = ["Hmm, ", "the user wrote ", "日本語 ", "and 👍🏽; ", "so I should ", "answer briefly.\n", "Done thinking."]
    let answer = ["## Answer", "\n\n", "Héllo ", "wörld 🇫🇷", "\n"]

    /// The thoughts, then the answer. `cut` splits the body into writes of that many bytes; `start`
    /// holds the first byte back until it opens (the client is attached), so the client sees every event.
    private func reasoningStream(field: String = "reasoning_content", cut: Int = 0,
                                 start: FakeUpstream.Gate? = nil) -> FakeUpstream.Script {
        let writes = thoughts.map { UpstreamStreams.reasoning($0, field: field) }
            + answer.map(UpstreamStreams.chunk) + [UpstreamStreams.finish()]
        guard cut > 0 else { return UpstreamStreams.gated(.eventStream(writes: writes), start: start) }
        let body = Array(writes.joined().utf8)
        let pieces = FakeUpstream.Script.pieces(body, cuts: Array(stride(from: cut, to: body.count, by: cut)))
        return UpstreamStreams.gated(FakeUpstream.Script(headers: [("Content-Type", "text/event-stream")],
                                                         steps: pieces.map { .send($0) }), start: start)
    }

    func testReasoningStreamsBeforeTheAnswerAndIsStoredInBothModes() async throws {
        for (mode, field) in [("text", "reasoning_content"), ("html", "reasoning")] {
            // Reads cut every 7 bytes: inside UTF-8 characters and SSE lines.
            let attached = FakeUpstream.Gate()
            upstream.enqueue(reasoningStream(field: field, cut: 7, start: attached))
            let id = try await parley.conversation(["model": "openai:fake"])
            let (_, assistant) = try await parley.send(id, "go")
            let read = try await parley.events(assistant, mode: mode == "text" ? "text" : nil, attached: attached)
            XCTAssertEqual(read.done?["status"] as? String, "complete", mode)
            let start = try XCTUnwrap(read.events.first.map(read.data), mode)
            XCTAssertEqual(start["reasoning"] as? String, "", "\(mode): the client saw the reply from its start")
            XCTAssertEqual(read.reasoning, thoughts.joined(), mode)
            let types = read.events.map(\.type)
            let lastReasoning = try XCTUnwrap(types.lastIndex(of: "reasoning"), mode)
            let firstAnswer = try XCTUnwrap(types.firstIndex { $0 == "delta" || $0 == "block" || $0 == "tail" }, mode)
            XCTAssertLessThan(lastReasoning, firstAnswer, "\(mode): the thinking comes first")

            let stored = try await parley.finished(assistant)
            XCTAssertEqual(stored["reasoning"] as? String, thoughts.joined(), mode)
            XCTAssertEqual(stored["content"] as? String, answer.joined(), "\(mode): reasoning is not in the answer")
            if mode == "text" {
                XCTAssertEqual(read.text, answer.joined())
            } else {
                XCTAssertEqual(read.page.blocks.joined(), stored["html"] as? String)
                XCTAssertFalse((stored["html"] as? String ?? "").contains("Hmm"), "reasoning is not rendered as answer")
            }

            // A finished message's stream is snapshot + done, the snapshot carrying the reasoning.
            let late = try await parley.events(assistant, mode: "text")
            XCTAssertEqual(late.events.map(\.type), ["snapshot", "done"])
            XCTAssertEqual(late.data(late.events[0])["reasoning"] as? String, thoughts.joined())
        }
    }

    func testMessagesWithoutReasoningHaveAnEmptyOne() async throws {
        upstream.enqueue(UpstreamStreams.complete(answer))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (user, assistant) = try await parley.send(id, "go")
        let read = try await parley.events(assistant, mode: "text")
        XCTAssertFalse(read.events.contains { $0.type == "reasoning" })
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(stored["reasoning"] as? String, "")
        let question = try await parley.message(user)
        XCTAssertEqual(question["reasoning"] as? String, "")
    }

    func testReconnectsRebuildTheReasoningExactly() async throws {
        let many = (0..<80).map { "t\($0) 日本 👍🏽 " }
        let writes = many.map { UpstreamStreams.reasoning($0) } + ["The answer."].map(UpstreamStreams.chunk)
            + [UpstreamStreams.finish()]
        // Ten thoughts, then a pause until the first client is attached (so it surely arrives
        // mid-reasoning); `done` waits for the fourth connection, so a slow client on a loaded
        // machine still makes at least four, whatever the pace of the thoughts.
        let attached = FakeUpstream.Gate()
        let finish = FakeUpstream.Gate()
        var script = UpstreamStreams.gated(.eventStream(writes: writes, delayMilliseconds: 3), finish: finish)
        let tenth = script.steps.indices.filter { if case .send = script.steps[$0] { true } else { false } }[9]
        script.steps.insert(.wait(attached), at: tenth + 1)
        upstream.enqueue(script)
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")

        // A client arriving mid-reasoning gets the reasoning so far in its snapshot.
        let midway = await attached.waitUntilReached()
        XCTAssertTrue(midway, "the upstream sent its first ten thoughts")
        let first = try await parley.events(assistant, attached: attached, until: { $0.count >= 2 })
        XCTAssertEqual(first.events.first?.type, "snapshot")

        var all = first.events
        var connections = 1
        // One limit for the whole loop: a server that never sends `done` fails here.
        let deadline = Deadline(.seconds(60))
        while all.last?.type != "done" {
            guard !deadline.hasPassed else {
                XCTFail("no done after \(connections) connections in \(deadline.limit)")
                break
            }
            connections += 1
            if connections == 4 { finish.open() }
            let take = connections % 3 + 1
            let after = all.last(where: \.isLogged).flatMap { Int64($0.id) }
            // Deliberately short reads before the fourth: a connection made after every thought was
            // read waits for the finish (the end of the window is one more reconnect, which is what
            // this is about). From the fourth on, a read without `take` events or `done` fails.
            let read = connections < 4
                ? try await parley.events(assistant, readingFor: 2, lastEventID: after, until: { $0.count >= take })
                : try await parley.events(assistant, lastEventID: after, until: { $0.count >= take },
                                          timeout: deadline.seconds(atMost: 20))
            XCTAssertNotEqual(read.events.first?.type, "snapshot", "a resumed connection is replayed exactly")
            all += read.events
        }
        XCTAssertGreaterThan(connections, 3)
        let rebuilt = StreamRead(status: 200, headers: [:], events: all, raw: "")
        XCTAssertEqual(rebuilt.reasoning, many.joined(), "reasoning rebuilt from \(connections) connections")
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(stored["reasoning"] as? String, many.joined())
    }

    func testStopKeepsTheReasoningAndContinueAppendsToIt() async throws {
        upstream.enqueue(.eventStream(writes: thoughts.map { UpstreamStreams.reasoning($0) }, then: [.stall]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        let all = thoughts.joined()
        _ = try await parley.events(assistant, mode: "text", until: { events in
            StreamRead(status: 200, headers: [:], events: events, raw: "").reasoning == all
        })
        let stopped = try await parley.call("POST", "/api/messages/\(assistant)/stop")
        XCTAssertEqual(stopped.status, 200, stopped.text)
        XCTAssertEqual(stopped.json["status"] as? String, "stopped")
        XCTAssertEqual(stopped.json["reasoning"] as? String, thoughts.joined())
        XCTAssertEqual(stopped.json["content"] as? String, "")

        upstream.enqueue(.eventStream(writes: [UpstreamStreams.reasoning(" More thought."), UpstreamStreams.chunk("Answer."),
                                               UpstreamStreams.finish()]))
        let continued = try await parley.call("POST", "/api/messages/\(assistant)/continue")
        XCTAssertEqual(continued.status, 200, continued.text)
        let read = try await parley.events(assistant, mode: "text")
        XCTAssertEqual(read.reasoning, thoughts.joined() + " More thought.")
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(stored["reasoning"] as? String, thoughts.joined() + " More thought.")
        XCTAssertEqual(stored["content"] as? String, "Answer.")
    }

    func testReasoningIsNeverSentBackUpstream() async throws {
        upstream.enqueue(reasoningStream())
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, first) = try await parley.send(id, "first question")
        _ = try await parley.finished(first)
        upstream.enqueue(UpstreamStreams.complete(["ok"]))
        let (_, second) = try await parley.send(id, "second question")
        _ = try await parley.finished(second)

        let requests = upstream.requests.filter { $0.method == "POST" }
        XCTAssertEqual(requests.count, 2)
        let context = String(decoding: requests[1].body, as: UTF8.self)
        XCTAssertTrue(context.contains("first question") && context.contains("second question"), context)
        XCTAssertTrue(context.contains("Answer"), "the answer is context: \(context)")
        XCTAssertFalse(context.contains("the user wrote"), "the reasoning is not: \(context)")
    }

    func testReasoningCountsAgainstTheReplyCap() async throws {
        await parley.stop()
        parley = try startParley(upstream: upstream, ["PARLEY_FRAME_INTERVAL_MS": "0", "PARLEY_MAX_REPLY_BYTES": "40"])
        let endless = (0..<200).map { _ in UpstreamStreams.reasoning("thinking… ") }
        upstream.enqueue(.eventStream(writes: endless, then: [.stall]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(stored["finish_reason"] as? String, "length")
        let reasoning = try XCTUnwrap(stored["reasoning"] as? String)
        XCTAssertLessThanOrEqual(reasoning.utf8.count, 40)
        XCTAssertTrue("thinking… thinking… thinking… thinking… ".hasPrefix(reasoning), reasoning)
    }

    func testAnthropicThinkingIsReasoning() async throws {
        await parley.stop()
        parley = try startParley(["PARLEY_ANTHROPIC_BASE_URL": upstream.baseURL, "PARLEY_ANTHROPIC_API_KEY": "test-key",
                                 "PARLEY_ANTHROPIC_MODELS": "claude-fake", "PARLEY_FRAME_INTERVAL_MS": "5"])
        func event(_ type: String, _ json: String) -> String { "event: \(type)\ndata: \(json)\n\n" }
        let writes = [
            event("message_start", #"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}"#),
            event("content_block_start", #"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#),
            event("content_block_delta", #"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think. "}}"#),
            event("content_block_delta", #"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Über-easy."}}"#),
            event("content_block_delta", #"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}}"#),
            event("content_block_stop", #"{"type":"content_block_stop","index":0}"#),
            event("content_block_start", #"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#),
            event("content_block_delta", #"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Yes."}}"#),
            event("content_block_stop", #"{"type":"content_block_stop","index":1}"#),
            event("message_delta", #"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}"#),
            event("message_stop", #"{"type":"message_stop"}"#),
        ]
        upstream.enqueue(.eventStream(writes: writes))
        let id = try await parley.conversation(["model": "anthropic:claude-fake"])
        let (_, assistant) = try await parley.send(id, "go")
        let read = try await parley.events(assistant, mode: "text")
        XCTAssertEqual(read.reasoning, "Let me think. Über-easy.")
        XCTAssertEqual(read.text, "Yes.")
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(stored["status"] as? String, "complete")
        XCTAssertEqual(stored["reasoning"] as? String, "Let me think. Über-easy.")
    }
}
