import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// A generation runs server-side: clients come and go, reconnect with Last-Event-ID and always end
/// with exactly the upstream text, no gap and no duplicate.
final class StreamResumeTests: UpstreamTestCase {
    override var settings: [String: String] { ["PARLEY_FRAME_INTERVAL_MS": "5"] }
    let tokens = (0..<150).map { index in ["α", "β ", "日本 ", "👍🏽", "w\(index) ", "\n\n", "- item\n"][index % 7] }

    func testTheGenerationGoesOnWhenTheOnlyClientLeaves() async throws {
        // Held until the client is attached: one arriving after the end would get snapshot + done.
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(tokens, delayMilliseconds: 2), start: attached))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        let partial = try await parley.events(assistant, mode: "text", attached: attached, until: { $0.count > 3 })
        XCTAssertNil(partial.done, "the client left before the end")
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(stored["status"] as? String, "complete")
        XCTAssertEqual(stored["content"] as? String, tokens.joined())
    }

    func testManyReconnectsWithLastEventIDLoseAndRepeatNothing() async throws {
        for mode in ["text", "html"] {
            // The stream starts once the first client is attached and its end (the finish, hence
            // `done`) waits for the sixth connection: a slow client on a loaded machine still makes
            // at least six, whatever the pace of the tokens.
            let attached = FakeUpstream.Gate()
            let finish = FakeUpstream.Gate()
            upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(tokens, delayMilliseconds: 3),
                                                   start: attached, finish: finish))
            let id = try await parley.conversation(["model": "openai:fake"])
            let (_, assistant) = try await parley.send(id, "go")
            var all: [SSEEvent] = []
            var lastID: Int64?
            var connections = 0
            // One limit for the whole loop: a server that never sends `done` fails here, not after
            // hundreds of reads.
            let deadline = Deadline(.seconds(60))
            while all.last?.type != "done" {
                guard !deadline.hasPassed else {
                    XCTFail("\(mode): no done after \(connections) connections in \(deadline.limit)")
                    break
                }
                connections += 1
                if connections == 6 { finish.open() }
                let take = connections % 4 + 1
                // Before the sixth, deliberately short reads: a connection made after every token has
                // been read waits for the finish, which only the sixth lets go (the end of the window
                // is one more reconnect, which is what this test is about). From the sixth on, every
                // read must end with `take` events or `done`, or it fails.
                let read = connections < 6
                    ? try await parley.events(assistant, readingFor: 2, mode: mode == "text" ? "text" : nil,
                                              lastEventID: lastID, attached: attached, until: { $0.count >= take })
                    : try await parley.events(assistant, mode: mode == "text" ? "text" : nil, lastEventID: lastID,
                                              attached: attached, until: { $0.count >= take },
                                              timeout: deadline.seconds(atMost: 20))
                // `tail_html` has no id of its own (provisional): the id checks are on the logged events.
                let fresh = read.logged
                if let lastID, let first = fresh.first {
                    XCTAssertNotEqual(first.type, "snapshot", "a resumed connection is replayed exactly")
                    XCTAssertGreaterThan(Int64(first.id) ?? 0, lastID)
                }
                let ids = fresh.compactMap { Int64($0.id) }
                XCTAssertEqual(ids, ids.sorted(), "ids grow")
                XCTAssertEqual(Set(ids).count, ids.count, "no duplicate")
                all += read.events
                lastID = all.last(where: \.isLogged).flatMap { Int64($0.id) } ?? lastID
            }
            XCTAssertGreaterThan(connections, 5)
            let combined = StreamRead(status: 200, headers: [:], events: all, raw: "")
            let stored = try await parley.finished(assistant)
            if mode == "text" {
                XCTAssertEqual(combined.text, tokens.joined(), "text rebuilt from \(connections) connections")
            } else {
                XCTAssertEqual(combined.page.blocks.joined(), stored["html"] as? String,
                               "page rebuilt from \(connections) connections")
                XCTAssertEqual(combined.page.tail, "")
            }
            print("\(mode): \(connections) connections, \(all.count) events")
        }
    }

    func testAReconnectFromBeforeTheLogStartsGetsASnapshotThenTheLiveDeltas() async throws {
        // "日本 " is sent, then the reply waits until the client is attached: the client resumes a
        // live reply, gets the text so far in a snapshot, then the rest as deltas.
        let attached = FakeUpstream.Gate()
        upstream.enqueue(FakeUpstream.Script(headers: [("Content-Type", "text/event-stream")], steps: [
            .send(UpstreamStreams.chunk("日本 ")), .wait(attached), .send(UpstreamStreams.chunk("and more")),
            .send(UpstreamStreams.finish())]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        let progressed = try await Deadline(.seconds(20)).wait {
            try await self.parley.message(assistant)["content"] as? String == "日本 "
        }
        XCTAssertTrue(progressed, "the first chunk arrived")
        let read = try await parley.events(assistant, mode: "text", lastEventID: 1, attached: attached)
        XCTAssertEqual(read.events.first?.type, "snapshot")
        let snapshot = read.data(try XCTUnwrap(read.events.first))
        XCTAssertEqual(snapshot["status"] as? String, "streaming")
        XCTAssertEqual(snapshot["content"] as? String, "日本 ")
        XCTAssertEqual(snapshot["content_length"] as? Int, "日本 ".utf8.count, "content_length is in UTF-8 bytes")
        XCTAssertEqual(snapshot["message_id"] as? String, assistant)
        let deltas = read.events.filter { $0.type == "delta" }.compactMap { read.data($0)["text"] as? String }
        XCTAssertEqual(deltas.joined(), "and more", "the rest streamed live")
        XCTAssertEqual(read.text, "日本 and more")
    }

    func testTheLastEventIDQueryParameterResumesLikeTheHeader() async throws {
        let attached = FakeUpstream.Gate()
        let finish = FakeUpstream.Gate()
        let tokens = ["one ", "two ", "three ", "four ", "five "]
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(tokens), start: attached, finish: finish))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        // The first connection reads until every token arrived (the finish is held), then leaves.
        let first = try await parley.events(assistant, mode: "text", attached: attached, until: { events in
            StreamRead(status: 200, headers: [:], events: events, raw: "").text == tokens.joined()
        })
        let lastID = try XCTUnwrap(first.lastID)
        finish.open()
        let resumed = try await parley.events(assistant, mode: "text", query: "last_event_id=\(lastID)")
        XCTAssertNotEqual(resumed.events.first?.type, "snapshot", "replayed exactly: \(resumed.events.map(\.type))")
        XCTAssertTrue(resumed.events.allSatisfy { (Int64($0.id) ?? 0) > lastID }, "nothing repeated")
        XCTAssertEqual(resumed.done?["status"] as? String, "complete")
        let combined = StreamRead(status: 200, headers: [:], events: first.events + resumed.events, raw: "")
        XCTAssertEqual(combined.text, tokens.joined())

        let malformed = try await parley.call("GET", "/api/messages/\(assistant)/stream?last_event_id=soon")
        XCTAssertEqual(malformed.status, 400)
        XCTAssertEqual(malformed.errorCode, "invalid_request")
    }

    func testAnUnknownModeIs400LikeOnTheUserEventStream() async throws {
        let id = try await parley.conversation(["model": "demo"])
        let (_, assistant) = try await parley.send(id, "go")
        for mode in ["markdown", "TEXT"] {
            let reply = try await parley.call("GET", "/api/messages/\(assistant)/stream?mode=\(mode)")
            XCTAssertEqual(reply.status, 400, mode)
            XCTAssertEqual(reply.errorCode, "invalid_request", mode)
            XCTAssertEqual((reply.json["error"] as? [String: Any])?["message"] as? String, "'mode' must be html or text.")
        }
    }

    func testAMalformedLastEventIDIs400() async throws {
        let id = try await parley.conversation(["model": "demo"])
        let (_, assistant) = try await parley.send(id, "go")
        let reply = try await parley.call("GET", "/api/messages/\(assistant)/stream",
                                          headers: [("Last-Event-ID", "yesterday")])
        XCTAssertEqual(reply.status, 400)
        XCTAssertEqual(reply.errorCode, "invalid_request")
    }
}

/// PARLEY_RETAIN_FINISHED_SECONDS: a finished reply is replayed exactly for that long, then a stream
/// request is answered from the store with snapshot + done.
final class RetainFinishedTests: UpstreamTestCase {
    static let retainSeconds = 3
    override var settings: [String: String] {
        ["PARLEY_RETAIN_FINISHED_SECONDS": String(Self.retainSeconds), "PARLEY_FRAME_INTERVAL_MS": "0"]
    }

    func testAFinishedReplyIsReplayedExactlyWithinTheWindowAndFromTheStoreAfterIt() async throws {
        let tokens = ["Alpha ", "beta ", "gamma ", "delta."]
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(tokens, delayMilliseconds: 5), start: attached))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        let whole = try await parley.events(assistant, mode: "text", attached: attached)
        let finishedAt = ContinuousClock.now
        XCTAssertEqual(whole.done?["status"] as? String, "complete")
        let deltas = whole.events.filter { $0.type == "delta" }
        XCTAssertGreaterThanOrEqual(deltas.count, 2, "streamed in several deltas: \(whole.events.map(\.type))")
        let resumeAfter = try XCTUnwrap(Int64(deltas[0].id))

        // Within the window: exactly the events after the given id, same ids, same data.
        let replay = try await parley.events(assistant, mode: "text", lastEventID: resumeAfter)
        let expected = whole.events.drop(while: { (Int64($0.id) ?? 0) <= resumeAfter })
        XCTAssertLessThan(ContinuousClock.now - finishedAt, .seconds(Self.retainSeconds), "the replay came in time")
        XCTAssertEqual(replay.events.map(\.id), expected.map(\.id))
        XCTAssertEqual(replay.events.map(\.type), expected.map(\.type))
        XCTAssertEqual(replay.events.map(\.data), expected.map(\.data))

        // After the window: the same request gets snapshot + done, built from the store.
        var late: StreamRead?
        let expired = try await Deadline(.seconds(Double(Self.retainSeconds) + 15)).wait(every: .milliseconds(100)) {
            late = try await parley.events(assistant, mode: "text", lastEventID: resumeAfter)
            return late?.events.first?.type == "snapshot"
        }
        let waited = ContinuousClock.now - finishedAt
        XCTAssertTrue(expired, "still replayed exactly \(waited) after the end")
        XCTAssertGreaterThanOrEqual(waited, .seconds(Self.retainSeconds) - .milliseconds(200), "not before the window ends")
        let read = try XCTUnwrap(late)
        XCTAssertEqual(read.events.map(\.type), ["snapshot", "done"])
        let snapshot = read.data(read.events[0])
        XCTAssertEqual(snapshot["content"] as? String, tokens.joined())
        XCTAssertEqual(snapshot["content_length"] as? Int, tokens.joined().utf8.count)
        XCTAssertEqual(snapshot["status"] as? String, "complete")
        XCTAssertEqual(read.done?["status"] as? String, "complete")
        XCTAssertEqual(read.done?["finish_reason"] as? String, "stop")
        let usage = read.done?["usage"] as? [String: Any]
        XCTAssertEqual(usage?["input_tokens"] as? Int, 7, "done.usage from the store: \(read.raw)")
        XCTAssertEqual(usage?["output_tokens"] as? Int, 3)
        let live = whole.done?["usage"] as? [String: Any]
        XCTAssertEqual(live?["input_tokens"] as? Int, 7, "done.usage of the live reply")
        XCTAssertEqual(live?["output_tokens"] as? Int, 3)
    }
}
