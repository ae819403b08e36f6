import Foundation
import ParleyRedis
import ParleyTestSupport
import XCTest

/// `kill -9` of the node generating a reply: another node sees its lease expire, wins the reply and
/// continues it (PARLEY_FAILOVER=continue), so a tab on the surviving node ends with exactly one
/// complete answer, the streamed prefix plus the continuation, ids still increasing; with
/// PARLEY_FAILOVER=off the reply ends `interrupted` (`node_lost`) and the tab gets its `done`. Node A is
/// a real `parley` process (killed), node B a server in this process; both on one PostgreSQL and Redis.
final class ClusterFailoverTests: XCTestCase {
    private var services: ClusterServices!

    override func setUpWithError() throws {
        services = try ClusterServices()
    }

    /// Node A (a process) and node B (in this process) in front of `upstream`, leases of 2 s unless `extra` says.
    private func nodes(_ upstream: FakeUpstream, _ extra: [String: String] = [:]) throws -> (ParleyProcess, TestParley) {
        let settings = try clusterSettings(services, [
            "PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1", "PARLEY_OPENAI_MODELS": "fake",
            "PARLEY_LEASE_SECONDS": "2", "PARLEY_TITLES": "off",
        ].merging(extra) { $1 })
        let a = try startProcess(environment: settings.merging([
            "PARLEY_PORT": "0", "PARLEY_PUBLIC": TestParley.repositoryRoot.appendingPathComponent("Public").path,
        ]) { $1 })
        return (a, try startParley(upstream: upstream, settings))
    }

    /// Starts a reply on A that streams `prefix` then stalls, and waits until B's tab has it all.
    private func replyCutOnA(_ a: ParleyProcess, _ b: TestParley, prefix: [String]) async throws -> (String, StreamRead) {
        let conversation = try await a.call("POST", "/api/conversations", ["model": "openai:fake"])
        let id = try XCTUnwrap(conversation["id"] as? String)
        let turn = try await a.call("POST", "/api/conversations/\(id)/messages", ["content": "go"])
        let assistant = try XCTUnwrap((turn["assistant_message"] as? [String: Any])?["id"] as? String)
        let expected = prefix.joined()
        let seen = try await b.events(assistant, mode: "text", until: { events in
            StreamRead(status: 200, headers: [:], events: events, raw: "").text == expected
        })
        XCTAssertEqual(seen.text, expected)
        return (assistant, seen)
    }

    func testAKilledNodesReplyIsContinuedByAnotherWithNothingLostOrRepeated() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(UpstreamStreams.stalling(after: ["Erste ", "Hälfte — ", "日本 "]))
        upstream.enqueue(UpstreamStreams.complete(["und ", "Ende ✓"]))
        let (a, b) = try nodes(upstream)
        let (assistant, seen) = try await replyCutOnA(a, b, prefix: ["Erste ", "Hälfte — ", "日本 "])
        let lastID = try XCTUnwrap(Int64(try XCTUnwrap(seen.events.last?.id)))
        async let page = b.events(assistant)

        let killed = ContinuousClock.now
        a.kill(SIGKILL)
        let rest = try await b.events(assistant, mode: "text", lastEventID: lastID, timeout: 30)
        let took = ContinuousClock.now - killed
        print("failover: kill -9 -> done on the surviving node in \(took) (lease 2 s)")
        XCTAssertEqual(rest.events.first?.type, "snapshot", "the continuation starts from what was seen")
        XCTAssertEqual(rest.text, "Erste Hälfte — 日本 und Ende ✓", "the prefix once, then the continuation")
        XCTAssertEqual(rest.done?["status"] as? String, "complete")
        XCTAssertTrue(rest.events.compactMap { Int64($0.id) }.allSatisfy { $0 > lastID }, "ids go on increasing")
        XCTAssertLessThan(took, .seconds(10))

        let stored = try await b.message(assistant)
        XCTAssertEqual(stored["content"] as? String, "Erste Hälfte — 日本 und Ende ✓")
        XCTAssertEqual(stored["status"] as? String, "complete")
        let html = try await page
        XCTAssertEqual(html.page.blocks.joined(), stored["html"] as? String, "the tab's page is the stored render")
        XCTAssertEqual(upstream.requests.count, 2, "one call cut by the kill, one continuation")
        let again = try await b.call("GET", "/api/conversations/\(try XCTUnwrap(stored["conversation_id"] as? String))")
        let replies = (again.json["messages"] as? [[String: Any]] ?? []).filter { $0["role"] as? String == "assistant" }
        XCTAssertEqual(replies.count, 1, "exactly one answer")
    }

    func testWithFailoverOffTheReplyEndsInterruptedAndTabsGetItsEnd() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(UpstreamStreams.stalling(after: ["Nur ", "halb"]))
        let (a, b) = try nodes(upstream, ["PARLEY_FAILOVER": "off"])
        let (assistant, seen) = try await replyCutOnA(a, b, prefix: ["Nur ", "halb"])
        let lastID = try XCTUnwrap(Int64(try XCTUnwrap(seen.events.last?.id)))
        a.kill(SIGKILL)
        let rest = try await b.events(assistant, mode: "text", lastEventID: lastID, timeout: 30)
        XCTAssertEqual(rest.done?["status"] as? String, "interrupted")
        XCTAssertEqual(rest.text, "Nur halb")
        let stored = try await b.message(assistant)
        XCTAssertEqual(stored["status"] as? String, "interrupted")
        XCTAssertEqual(stored["content"] as? String, "Nur halb")
        XCTAssertEqual((stored["error"] as? [String: Any])?["code"] as? String, "node_lost")
        XCTAssertEqual(upstream.requests.count, 1, "nothing is sent upstream again")
    }

    /// SIGTERM (a rolling restart) hands the node's replies over at once: another node continues each well
    /// before the lease (5 s here) would have run out, and the answer is whole.
    func testAGracefulStopHandsTheReplyOverWithoutWaitingForTheLease() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(UpstreamStreams.stalling(after: ["Vor ", "dem ", "Neustart "]))
        upstream.enqueue(UpstreamStreams.complete(["und ", "danach ✓"]))
        let (a, b) = try nodes(upstream, ["PARLEY_LEASE_SECONDS": "5"])
        let (assistant, seen) = try await replyCutOnA(a, b, prefix: ["Vor ", "dem ", "Neustart "])
        let lastID = try XCTUnwrap(Int64(try XCTUnwrap(seen.events.last?.id)))
        let stopping = ContinuousClock.now
        a.kill(SIGTERM)
        XCTAssertEqual(a.process.terminationStatus, 0, "a clean shutdown")
        XCTAssertTrue(a.errors.contains("handed over"), a.errors)
        let rest = try await b.events(assistant, mode: "text", lastEventID: lastID, timeout: 30)
        let took = ContinuousClock.now - stopping
        print("handover: SIGTERM -> done on the other node in \(took) (lease 5 s)")
        XCTAssertLessThan(took, .seconds(4), "taken over at the next look, not after the lease")
        XCTAssertEqual(rest.text, "Vor dem Neustart und danach ✓")
        XCTAssertEqual(rest.done?["status"] as? String, "complete")
        let stored = try await b.message(assistant)
        XCTAssertEqual(stored["content"] as? String, "Vor dem Neustart und danach ✓")
    }

    /// A stop asked while the reply's node is dead and its lease still runs: after 5 s without an answer
    /// from that node, the reply ends `stopped` with its stored text, and no takeover continues it.
    func testAStopWhileTheRepliesNodeIsDeadEndsItAndNoTakeoverContinuesIt() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(UpstreamStreams.stalling(after: ["Halt ", "mich"]))
        let (a, b) = try nodes(upstream, ["PARLEY_LEASE_SECONDS": "8"])
        let (assistant, _) = try await replyCutOnA(a, b, prefix: ["Halt ", "mich"])
        let live = try await b.message(assistant)
        XCTAssertEqual(live["status"] as? String, "streaming")
        a.kill(SIGKILL)
        let stopped = try await b.call("POST", "/api/messages/\(assistant)/stop")
        XCTAssertEqual(stopped.status, 200, stopped.text)
        XCTAssertEqual(stopped.json["status"] as? String, "stopped")
        try await Task.sleep(for: .seconds(4))  // past the lease: a takeover would have started by now
        let stored = try await b.message(assistant)
        XCTAssertEqual(stored["status"] as? String, "stopped")
        XCTAssertEqual(upstream.requests.count, 1, "nothing was continued")
    }

    /// Fencing: a node too slow to renew a lease, whose reply another node won meanwhile, abandons the
    /// reply at its next renewal (its upstream call ends, nothing more is written), so one reply never
    /// has two writers for longer than a renewal period.
    func testANodeWhoseLeaseAnotherNodeWonAbandonsTheReply() async throws {
        let upstream = try startUpstream()
        let settings = try clusterSettings(services, ["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1",
                                                      "PARLEY_OPENAI_MODELS": "fake"])
        let a = try startParley(settings)
        upstream.enqueue(UpstreamStreams.stalling(after: ["Vorher "]))
        let id = try await a.conversation(["model": "openai:fake"])
        let (_, assistant) = try await a.send(id, "go")
        _ = try await a.events(assistant, mode: "text", until: { $0.contains { $0.data.contains("Vorher") } })

        // Another node judged this one dead and won the lease, as its `SET NX` would.
        let redis = RedisConnection(url: try RedisURL(parsing: services.redis))
        defer { redis.close() }
        let lease = try XCTUnwrap(settings["PARLEY_REDIS_PREFIX"]) + "lease:" + assistant
        _ = try redis.command(["SET", RedisArgument(lease), "another-node", "PX", "30000"])
        let seen = await upstream.waitForDisconnect(timeout: .seconds(5))
        XCTAssertNotNil(seen, "the node that lost the lease ended its upstream call")
        let row = try await a.message(assistant)
        XCTAssertEqual(row["status"] as? String, "streaming", "left for the node that holds the lease")
        XCTAssertEqual(try redis.command(["GET", RedisArgument(lease)]).text, "another-node", "never taken back")
    }
}
