import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// Replies across the nodes of one cluster (Redis Streams): a reply run by node A is streamed by node B
/// byte for byte (UTF-8 cut inside characters upstream), a tab that reconnects to B with any event id
/// of A's stream is replayed exactly what followed it, a tab that opens mid-reply on B starts with the
/// snapshot, and a stop asked on B stops A's upstream call and keeps exactly the streamed text.
final class ClusterReplyTests: XCTestCase {
    private var services: ClusterServices!

    override func setUpWithError() throws {
        services = try ClusterServices()
    }

    private func nodes(_ upstream: FakeUpstream, _ extra: [String: String] = [:]) throws -> (TestParley, TestParley) {
        let settings = try clusterSettings(services, extra)
        return (try startParley(upstream: upstream, settings), try startParley(upstream: upstream, settings))
    }

    func testAReplyRunOnOneNodeStreamsExactlyOnAnotherAndResumesFromEveryID() async throws {
        let upstream = try startUpstream()
        let (a, b) = try nodes(upstream, ["PARLEY_FRAME_INTERVAL_MS": "5"])
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(UpstreamStreams.zoo, cut: 3), start: attached))
        let id = try await a.conversation(["model": "openai:fake"])
        let (_, assistant) = try await a.send(id, "go")
        async let html = b.events(assistant, attached: attached)
        let text = try await b.events(assistant, mode: "text")
        let page = try await html
        let expected = UpstreamStreams.zoo.joined()
        XCTAssertEqual(text.text, expected, "the text stream on B, rebuilt")
        XCTAssertEqual(text.done?["status"] as? String, "complete")
        XCTAssertEqual(page.events.first?.type, "snapshot", "a tab without an id starts with the snapshot")
        let stored = try await a.message(assistant)
        XCTAssertEqual(stored["content"] as? String, expected)
        XCTAssertEqual(page.page.blocks.joined(), stored["html"] as? String, "B's blocks and patches are the stored render")

        // Every id of the stream, resumed on the other node: exactly the events after it (the provisional
        // `tail_html`, sent without an id, is left out of the comparison: a resume may repeat the newest).
        let logged = page.events.filter { $0.type != "tail_html" }
        let replay = try await a.events(assistant)
        XCTAssertEqual(replay.events.map(\.id), page.events.map(\.id), "both nodes serve one stream")
        for (index, event) in logged.enumerated() where event.type != "done" {
            let resumed = try await b.events(assistant, lastEventID: Int64(event.id))
            let rest = logged[(index + 1)...].map { "\($0.id) \($0.type) \($0.data)" }
            XCTAssertEqual(resumed.events.filter { $0.type != "tail_html" }.map { "\($0.id) \($0.type) \($0.data)" }, Array(rest),
                           "resumed after \(event.id) (\(event.type))")
        }
        let afterDone = try await b.events(assistant, readingFor: 1, lastEventID: Int64(try XCTUnwrap(logged.last?.id)))
        XCTAssertEqual(afterDone.events.count, 0, "nothing after done")
    }

    func testATabOpenedMidReplyOnAnotherNodeStartsWithTheSnapshotAndMissesNothing() async throws {
        let upstream = try startUpstream()
        let (a, b) = try nodes(upstream)
        let finish = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(["Première ", "moitié. ", "Zweite ", "Hälfte ✓"],
                                                                        delayMilliseconds: 20), finish: finish))
        let id = try await a.conversation(["model": "openai:fake"])
        let (_, assistant) = try await a.send(id, "go")
        let partial = try await a.events(assistant, mode: "text", until: { events in
            events.contains { $0.data.contains("Hälfte") }
        })
        XCTAssertEqual(partial.text, "Première moitié. Zweite Hälfte ✓")
        async let late = b.events(assistant, mode: "text")
        try await Task.sleep(for: .milliseconds(300))
        finish.open()
        let read = try await late
        XCTAssertEqual(read.events.first?.type, "snapshot")
        XCTAssertEqual(read.text, "Première moitié. Zweite Hälfte ✓")
        XCTAssertEqual(read.done?["status"] as? String, "complete")
    }

    func testAStopAskedOnAnotherNodeStopsTheUpstreamAndKeepsTheStreamedText() async throws {
        let upstream = try startUpstream()
        let (a, b) = try nodes(upstream)
        upstream.enqueue(UpstreamStreams.stalling(after: ["Hello", " there", " 👋"]))
        let id = try await a.conversation(["model": "openai:fake"])
        let (_, assistant) = try await a.send(id, "hi")
        let partial = try await b.events(assistant, mode: "text", until: { events in
            events.contains { $0.data.contains("👋") }
        })
        XCTAssertEqual(partial.text, "Hello there 👋")
        let before = ContinuousClock.now
        let stopped = try await b.call("POST", "/api/messages/\(assistant)/stop")
        XCTAssertEqual(stopped.status, 200, stopped.text)
        XCTAssertEqual(stopped.json["status"] as? String, "stopped")
        XCTAssertEqual(stopped.json["content"] as? String, "Hello there 👋")
        let seen = await upstream.waitForDisconnect(timeout: .seconds(20))
        let disconnect = try XCTUnwrap(seen)
        print("stop on B -> upstream of A closed: \(disconnect - before)")
        XCTAssertLessThan(disconnect - before, .seconds(5))
        let late = try await b.events(assistant)
        XCTAssertEqual(late.done?["status"] as? String, "stopped")
    }

    func testAContinueOnAnotherNodeGoesOnInTheSameStream() async throws {
        let upstream = try startUpstream()
        let (a, b) = try nodes(upstream)
        upstream.enqueue(UpstreamStreams.stalling(after: ["Erste ", "Hälfte, "]))
        upstream.enqueue(UpstreamStreams.complete(["zweite ", "Hälfte ✓"]))
        let id = try await a.conversation(["model": "openai:fake"])
        let (_, assistant) = try await a.send(id, "go")
        let first = try await a.events(assistant, mode: "text", until: { $0.contains { $0.data.contains("Hälfte, ") } })
        let stopped = try await a.call("POST", "/api/messages/\(assistant)/stop")
        XCTAssertEqual(stopped.json["content"] as? String, "Erste Hälfte, ")
        let seenFirst = try await a.events(assistant, mode: "text", lastEventID: Int64(try XCTUnwrap(first.events.last?.id)))
        let doneID = try XCTUnwrap(seenFirst.events.last { $0.type == "done" }?.id)

        let continued = try await b.call("POST", "/api/messages/\(assistant)/continue")
        XCTAssertEqual(continued.status, 200, continued.text)
        // The tab on A that saw the first run's `done` reopens from it: the second run, run by B, exactly.
        let second = try await a.events(assistant, mode: "text", lastEventID: Int64(doneID))
        XCTAssertEqual(second.events.first?.type, "snapshot")
        XCTAssertEqual(second.text, "Erste Hälfte, zweite Hälfte ✓")
        XCTAssertEqual(second.done?["status"] as? String, "complete")
        let ids = second.events.compactMap { Int64($0.id) }
        XCTAssertTrue(ids.allSatisfy { $0 > Int64(doneID)! }, "ids go on above the first run's")
    }

    func testDeletingAConversationOnAnotherNodeStopsItsReply() async throws {
        let upstream = try startUpstream()
        let (a, b) = try nodes(upstream)
        upstream.enqueue(UpstreamStreams.stalling(after: ["Still ", "going"]))
        let id = try await a.conversation(["model": "openai:fake"])
        let (_, assistant) = try await a.send(id, "go")
        _ = try await b.events(assistant, mode: "text", until: { $0.contains { $0.data.contains("going") } })
        let deleted = try await b.call("DELETE", "/api/conversations/\(id)")
        XCTAssertEqual(deleted.status, 204, deleted.text)
        let seen = await upstream.waitForDisconnect(timeout: .seconds(10))
        XCTAssertNotNil(seen, "the node running the reply stopped its upstream call")
        let gone = try await a.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(gone.status, 404)
    }

    func testRedisRestartedMidReplyLosesAndRepeatsNothing() async throws {
        let redis = try OwnRedisServer()
        defer { redis.remove() }
        let upstream = try startUpstream()
        let settings = try clusterSettings(services, redis: redis.url)
        let a = try startParley(upstream: upstream, settings)
        let b = try startParley(upstream: upstream, settings)
        let resume = FakeUpstream.Gate()
        var script = UpstreamStreams.complete(["Vor ", "dem ", "Neustart, ", "nach ", "dem ", "Neustart ✓"],
                                              delayMilliseconds: 10)
        // Held after the third token's write (sleeps sit between the writes).
        let sends = script.steps.indices.filter { if case .send = script.steps[$0] { true } else { false } }
        script.steps.insert(.wait(resume), at: sends[2] + 1)
        upstream.enqueue(script)
        let id = try await a.conversation(["model": "openai:fake"])
        let (_, assistant) = try await a.send(id, "go")
        let before = try await b.events(assistant, mode: "text", until: { $0.contains { $0.data.contains("Neustart, ") } })
        XCTAssertEqual(before.text, "Vor dem Neustart, ")
        let lastID = try XCTUnwrap(Int64(try XCTUnwrap(before.events.last?.id)))

        try redis.restart()
        resume.open()
        let after = try await b.events(assistant, mode: "text", lastEventID: lastID, timeout: 30)
        XCTAssertEqual(StreamRead(status: 200, headers: [:], events: before.events + after.events, raw: "").text,
                       "Vor dem Neustart, nach dem Neustart ✓", "the tab that was following: nothing lost, nothing twice")
        XCTAssertEqual(after.done?["status"] as? String, "complete")
        let fresh = try await b.events(assistant, mode: "text")
        XCTAssertEqual(fresh.events.first?.type, "snapshot", "a tab opened after the restart starts from a snapshot")
        XCTAssertEqual(fresh.text, "Vor dem Neustart, nach dem Neustart ✓")
        let stored = try await a.message(assistant)
        XCTAssertEqual(stored["content"] as? String, "Vor dem Neustart, nach dem Neustart ✓")
    }

    func testARegenerateOnAnotherNodeIsANewBranchEveryNodeStreams() async throws {
        let upstream = try startUpstream()
        let (a, b) = try nodes(upstream)
        upstream.enqueue(UpstreamStreams.complete(["Erste ", "Antwort"]))
        upstream.enqueue(UpstreamStreams.complete(["Zweite ", "Antwort ✓"]))
        let id = try await a.conversation(["model": "openai:fake"])
        let (_, first) = try await a.send(id, "go")
        _ = try await a.finished(first)
        let regenerated = try await b.call("POST", "/api/messages/\(first)/regenerate")
        XCTAssertEqual(regenerated.status, 201, regenerated.text)
        let second = try XCTUnwrap(regenerated.json["id"] as? String)
        let seen = try await a.events(second, mode: "text")
        XCTAssertEqual(seen.text, "Zweite Antwort ✓")
        XCTAssertEqual(seen.done?["status"] as? String, "complete")
        let branch = try await a.call("GET", "/api/conversations/\(id)")
        let shown = (branch.json["messages"] as? [[String: Any]] ?? []).last
        XCTAssertEqual(shown?["id"] as? String, second)
        XCTAssertEqual((shown?["siblings"] as? [String: Any])?["count"] as? Int, 2)
    }
}
