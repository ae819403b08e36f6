import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// Races and end paths of generations found in review: each test states the promise it keeps.
final class GenerationRaceTests: XCTestCase {
    // A. A client that resumes with the id of `done` (EventSource reconnects when the server ends the
    //    response; an API client passes ?last_event_id=) must get an ended response, not a stream
    //    that stays open forever.
    func testResumingFromTheDoneIDEndsTheResponse() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream)
        upstream.enqueue(UpstreamStreams.complete(["Hello", " world"]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "hi")
        let first = try await parley.events(assistant, mode: "text")
        XCTAssertEqual(first.done?["status"] as? String, "complete")
        let doneID = try XCTUnwrap(first.lastID)

        // An ended response returns at once; one that stays open fails the read after 10 s (slack
        // for a loaded machine, not the expected time) with what it received.
        let again = try await parley.events(assistant, mode: "text", lastEventID: doneID, timeout: 10)
        XCTAssertEqual(again.events.map(\.type), [], "nothing comes after done: \(again.raw.debugDescription)")
    }

    // C. The per-user cap must hold for concurrent sends; `Generations.send` checks it, then awaits
    //    the model listing (conversation without a model), then starts: the check is stale by then.
    func testConcurrentSendsCannotPassTheCapWhileTheModelListLoads() async throws {
        let upstream = try startUpstream { request in
            if request.path.hasSuffix("/models") {
                return FakeUpstream.Script(status: 200, headers: [("Content-Type", "application/json")],
                                           framing: .contentLength,
                                           steps: [.sleep(milliseconds: 300), .send("{\"data\":[{\"id\":\"fake\"}]}")])
            }
            return UpstreamStreams.stalling(after: ["x"])
        }
        let parley = try startParley(["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1",
                                     "PARLEY_MAX_GENERATIONS_PER_USER": "1"])
        let id = try await parley.conversation()  // no model: the default model is looked up per send
        async let a = parley.call("POST", "/api/conversations/\(id)/messages", json: ["content": "one"])
        async let b = parley.call("POST", "/api/conversations/\(id)/messages", json: ["content": "two"])
        let statuses = [try await a.status, try await b.status].sorted()
        let live = await parley.app.generations.liveCount
        XCTAssertEqual(statuses, [201, 429], "cap 1, two concurrent sends")
        XCTAssertLessThanOrEqual(live, 1, "live generations with a per-user cap of 1")
    }

    // D. Deleting a conversation while its reply streams: the generation keeps its cap slot and the
    //    upstream call until the model ends (or the 60 s idle timeout).
    func testDeletingAConversationEndsItsLiveReply() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream, ["PARLEY_MAX_GENERATIONS_PER_USER": "1"])
        upstream.enqueue(UpstreamStreams.stalling(after: ["x"]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "hi")
        // The upstream call must be under way (its first token relayed) before the delete, or there
        // is no connection whose end the fake upstream could see.
        let started = try await parley.events(assistant, mode: "text", until: { events in
            StreamRead(status: 200, headers: [:], events: events, raw: "").text == "x"
        })
        XCTAssertEqual(started.text, "x")
        let deleted = try await parley.call("DELETE", "/api/conversations/\(id)")
        XCTAssertEqual(deleted.status, 204)
        let disconnect = await upstream.waitForDisconnect(timeout: .seconds(20))
        XCTAssertNotNil(disconnect, "the upstream call of a deleted conversation goes on")
        upstream.enqueue(UpstreamStreams.complete(["ok"]))
        let other = try await parley.conversation(["model": "openai:fake"])
        let next = try await parley.call("POST", "/api/conversations/\(other)/messages", json: ["content": "again"])
        XCTAssertEqual(next.status, 201, "the deleted conversation's reply still holds the only slot: \(next.text)")
    }

    // Holds? Stop while text waits for the frame timer keeps it, in the store and in the events.
    func testStopWhileAFrameIsPendingKeepsThePendingText() async throws {
        let upstream = try startUpstream()
        // "first" goes out at once (the first frame is not delayed); " second" then waits a minute
        // for its frame, so it is surely still pending when the stop comes, however slow the machine.
        let parley = try startParley(upstream: upstream, ["PARLEY_FRAME_INTERVAL_MS": "60000"])
        let attached = FakeUpstream.Gate()
        upstream.enqueue(FakeUpstream.Script(headers: [("Content-Type", "text/event-stream")], steps: [
            .wait(attached), .send(UpstreamStreams.chunk("first")), .sleep(milliseconds: 50),
            .send(UpstreamStreams.chunk(" second")), .stall]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "hi")
        let parleyRef = parley
        let reader = Task { try await parleyRef.events(assistant, mode: "text", attached: attached) }
        // The progress flush (every 200 ms) stores the pending text too: once the stored content is
        // "first second", the generation holds " second" (not yet sent as a frame).
        let deadline = ContinuousClock.now + .seconds(20)
        var progress = ""
        while progress != "first second", ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            progress = try await parley.message(assistant)["content"] as? String ?? ""
        }
        XCTAssertEqual(progress, "first second", "the generation received both chunks")
        let stopped = try await parley.call("POST", "/api/messages/\(assistant)/stop")
        XCTAssertEqual(stopped.json["content"] as? String, "first second")
        let read = try await reader.value
        XCTAssertEqual(read.text, "first second")
        XCTAssertEqual(read.done?["status"] as? String, "stopped")
    }

    // Probe: a late client of a retained finished generation gets snapshot(id S) + done; resuming from S
    // must not replay anything the snapshot already held.
    func testResumingFromAFinishedSnapshotRepeatsNothing() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream)
        upstream.enqueue(UpstreamStreams.complete(["# Title\n\nOne.\n\n", "Two [x].\n\n[x]: /y\n"]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "hi")
        _ = try await parley.events(assistant)
        let late = try await parley.events(assistant)
        XCTAssertEqual(late.events.map(\.type), ["snapshot", "done"])
        let snapshotID = try XCTUnwrap(Int64(late.events[0].id))
        for mode in [nil, "text"] {
            let resumed = try await parley.events(assistant, mode: mode, lastEventID: snapshotID)
            XCTAssertEqual(resumed.events.map(\.type), ["done"], "mode \(mode ?? "html")")
        }
    }

    // E. A send suspended in Generations (model listing) while shutdown interrupts the live replies
    //    starts its generation afterwards: nothing interrupts or flushes it.
    func testASendInFlightDuringShutdownIsNotLeftLive() async throws {
        // The model listing is held until the shutdown has run, so the send is surely suspended in it.
        let listing = FakeUpstream.Gate()
        let upstream = try startUpstream { request in
            if request.path.hasSuffix("/models") {
                return FakeUpstream.Script(status: 200, headers: [("Content-Type", "application/json")],
                                           framing: .contentLength,
                                           steps: [.wait(listing), .send("{\"data\":[{\"id\":\"fake\"}]}")])
            }
            return UpstreamStreams.stalling(after: ["x"])
        }
        let parley = try startParley(["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1"])
        let id = try await parley.conversation()
        let sending = Task { try await parley.call("POST", "/api/conversations/\(id)/messages", json: ["content": "one"]) }
        let inListing = await listing.waitUntilReached()
        XCTAssertTrue(inListing, "the send asked for the model list")
        await parley.app.generations.shutdown()
        listing.open()
        // The send answers only once its generation started (or was refused): no sleep needed.
        let reply = try await sending.value
        XCTAssertEqual(reply.status, 503, reply.text)
        XCTAssertEqual(reply.errorCode, "shutting_down")
        let live = await parley.app.generations.liveCount
        XCTAssertEqual(live, 0, "a generation started after shutdown")
    }

    // F. Starts write their rows off the Generations actor, between admission and registration. A
    //    delete that comes in that window must still end them: no reply of a deleted conversation is
    //    left live holding its upstream call and cap slot (the upstream here never ends by itself).
    func testSendsRacingADeleteLeaveNothingLive() async throws {
        let upstream = try startUpstream { _ in UpstreamStreams.stalling(after: ["x"]) }
        let parley = try startParley(["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1",
                                     "PARLEY_OPENAI_MODELS": "fake", "PARLEY_MAX_GENERATIONS_PER_USER": "100",
                                     "PARLEY_USER_MESSAGES_PER_MINUTE": "1000"])
        for round in 0..<3 {
            let id = try await parley.conversation(["model": "openai:fake"])
            let sends = (0..<12).map { index in
                Task { try await parley.call("POST", "/api/conversations/\(id)/messages",
                                             json: ["content": "send \(round).\(index)"]) }
            }
            let deleted = try await parley.call("DELETE", "/api/conversations/\(id)")
            XCTAssertEqual(deleted.status, 204, deleted.text)
            for send in sends {
                let status = try await send.value.status
                XCTAssertTrue([201, 404].contains(status), "send answered \(status)")
            }
            // Stops are awaited by the delete, so by now every reply it could see has ended.
            let live = await parley.app.generations.liveCount
            XCTAssertEqual(live, 0, "round \(round): a reply of the deleted conversation is still live")
        }
    }

    // G. A start whose write is refused gives its cap slot back: a continue of an answer that has
    //    replies (409), repeated past the per-user cap, must not leave the user unable to send.
    func testRefusedContinuesDoNotKeepCapSlots() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream, ["PARLEY_MAX_GENERATIONS_PER_USER": "1"])
        upstream.enqueue(UpstreamStreams.complete(["one"]), UpstreamStreams.complete(["two"]),
                         UpstreamStreams.complete(["three"]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, first) = try await parley.send(id, "q1")
        _ = try await parley.finished(first)
        let (_, second) = try await parley.send(id, "q2")
        _ = try await parley.finished(second)
        for _ in 0..<3 {
            let refused = try await parley.call("POST", "/api/messages/\(first)/continue")
            XCTAssertEqual(refused.status, 409, refused.text)
        }
        let live = await parley.app.generations.liveCount
        XCTAssertEqual(live, 0)
        let (_, third) = try await parley.send(id, "q3")
        let stored = try await parley.finished(third)
        XCTAssertEqual(stored["content"] as? String, "three")
    }
}
