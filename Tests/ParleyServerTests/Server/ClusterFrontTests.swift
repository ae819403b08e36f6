import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// The protocol suites across nodes as a browser meets them: every request through nginx round-robin
/// (no sticky sessions) in front of three nodes, so consecutive requests of one reply land on different
/// nodes. nginx's access log names the node of each request: the tests show the spread, and steer a
/// stop to a node that does not run the reply (round-robin's next). Exact bytes (UTF-8 cut inside
/// characters upstream), resume from every event id, stop, continue, regenerate, a tool approval and
/// live sync across tabs.
final class ClusterFrontTests: XCTestCase {
    private var services: ClusterServices!

    override func setUpWithError() throws {
        services = try ClusterServices()
    }

    /// Three nodes behind nginx; the client sends every request through nginx.
    private func cluster(_ upstream: FakeUpstream, _ extra: [String: String] = [:],
                         directory: URL? = nil) throws -> (web: TestParley, front: NginxFront, nodes: [TestParley]) {
        let settings = try clusterSettings(services, ["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1",
                                                      "PARLEY_OPENAI_MODELS": "fake"].merging(extra) { $1 })
        let nodes = try (0..<3).map { index in
            try startParley(settings, directory: directory?.appendingPathComponent("node-\(index)"))
        }
        let front = try startFront(nodes)
        return (nodes[0].through(front), front, nodes)
    }

    func testExactBytesAndAResumeFromEveryIDLandOnEveryNode() async throws {
        let upstream = try startUpstream()
        let (web, front, _) = try cluster(upstream, ["PARLEY_FRAME_INTERVAL_MS": "5"])
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(UpstreamStreams.zoo, cut: 3), start: attached))
        let id = try await web.conversation(["model": "openai:fake"])
        let (_, assistant) = try await web.send(id, "go")
        async let html = web.events(assistant, attached: attached)
        let text = try await web.events(assistant, mode: "text")
        let page = try await html
        let expected = UpstreamStreams.zoo.joined()
        XCTAssertEqual(text.text, expected)
        XCTAssertEqual(text.done?["status"] as? String, "complete")
        let stored = try await web.message(assistant)
        XCTAssertEqual(stored["content"] as? String, expected)
        XCTAssertEqual(page.page.blocks.joined(), stored["html"] as? String, "the tab's blocks and patches are the stored render")

        let logged = page.events.filter { $0.type != "tail_html" }
        for (index, event) in logged.enumerated() where event.type != "done" {
            let resumed = try await web.events(assistant, lastEventID: Int64(event.id))
            let rest = logged[(index + 1)...].map { "\($0.id) \($0.type) \($0.data)" }
            XCTAssertEqual(resumed.events.filter { $0.type != "tail_html" }.map { "\($0.id) \($0.type) \($0.data)" }, Array(rest),
                           "resumed after \(event.id) (\(event.type))")
        }
        let streams = try await front.served(atLeast: logged.count + 1).filter { $0.path == "/api/messages/\(assistant)/stream" }
        XCTAssertEqual(Set(streams.map(\.node)).count, 3, "the reply's streams were served by all three nodes: \(streams)")
        XCTAssertTrue(streams.allSatisfy { $0.status == 200 })
    }

    func testAStopLandingOnAnotherNodeClosesTheUpstreamWithin200Milliseconds() async throws {
        let upstream = try startUpstream()
        let (web, front, _) = try cluster(upstream)
        upstream.enqueue(UpstreamStreams.stalling(after: ["Hello", " there", " 👋"]))
        let id = try await web.conversation(["model": "openai:fake"])
        let (_, assistant) = try await web.send(id, "hi")
        let owner = try await front.node(of: "POST", "/api/conversations/\(id)/messages")
        let partial = try await web.events(assistant, mode: "text", until: { $0.contains { $0.data.contains("👋") } })
        XCTAssertEqual(partial.text, "Hello there 👋")

        try await front.turn(past: owner, web)
        let before = ContinuousClock.now
        let stopped = try await web.call("POST", "/api/messages/\(assistant)/stop")
        XCTAssertEqual(stopped.status, 200, stopped.text)
        XCTAssertEqual(stopped.json["content"] as? String, "Hello there 👋")
        let seen = await upstream.waitForDisconnect(timeout: .seconds(10))
        let disconnect = try XCTUnwrap(seen)
        let stopNode = try await front.node(of: "POST", "/api/messages/\(assistant)/stop")
        XCTAssertNotEqual(stopNode, owner, "the stop was served by a node that does not run the reply")
        print("stop through nginx on another node -> upstream closed in \(disconnect - before)")
        XCTAssertLessThan(disconnect - before, .milliseconds(200))
        let late = try await web.events(assistant, mode: "text")
        XCTAssertEqual(late.done?["status"] as? String, "stopped")
        XCTAssertEqual(late.text, "Hello there 👋")
    }

    func testContinueAndRegenerateMakeOneTreeWhicheverNodesServeThem() async throws {
        let upstream = try startUpstream()
        let (web, front, _) = try cluster(upstream)
        upstream.enqueue(UpstreamStreams.stalling(after: ["Erste ", "Hälfte, "]))
        upstream.enqueue(UpstreamStreams.complete(["zweite ", "Hälfte ✓"]))
        upstream.enqueue(UpstreamStreams.complete(["Andere ", "Antwort ✓"]))
        let id = try await web.conversation(["model": "openai:fake"])
        let (_, first) = try await web.send(id, "go")
        _ = try await web.events(first, mode: "text", until: { $0.contains { $0.data.contains("Hälfte, ") } })
        let stopped = try await web.call("POST", "/api/messages/\(first)/stop")
        XCTAssertEqual(stopped.json["content"] as? String, "Erste Hälfte, ")
        let ended = try await web.events(first, mode: "text")
        let doneID = try XCTUnwrap(Int64(try XCTUnwrap(ended.events.last { $0.type == "done" }?.id)))

        let continued = try await web.call("POST", "/api/messages/\(first)/continue")
        XCTAssertEqual(continued.status, 200, continued.text)
        let second = try await web.events(first, mode: "text", lastEventID: doneID)
        XCTAssertEqual(second.text, "Erste Hälfte, zweite Hälfte ✓")
        XCTAssertEqual(second.done?["status"] as? String, "complete")
        XCTAssertTrue(second.events.compactMap { Int64($0.id) }.allSatisfy { $0 > doneID }, "ids go on above the first run's")

        let regenerated = try await web.call("POST", "/api/messages/\(first)/regenerate")
        XCTAssertEqual(regenerated.status, 201, regenerated.text)
        let sibling = try XCTUnwrap(regenerated.json["id"] as? String)
        let other = try await web.events(sibling, mode: "text")
        XCTAssertEqual(other.text, "Andere Antwort ✓")
        let shown = try await web.call("GET", "/api/conversations/\(id)")
        let last = (shown.json["messages"] as? [[String: Any]] ?? []).last
        XCTAssertEqual(last?["id"] as? String, sibling)
        XCTAssertEqual((last?["siblings"] as? [String: Any])?["count"] as? Int, 2)
        let kept = try await web.message(first)
        XCTAssertEqual(kept["content"] as? String, "Erste Hälfte, zweite Hälfte ✓", "the first branch is kept")

        let served = try await front.served(atLeast: 10)
        let writes = served.filter { $0.method == "POST" }
        XCTAssertEqual(writes.map(\.status), [201, 201, 200, 200, 201], "\(writes)")
        XCTAssertGreaterThan(Set(writes.map(\.node)).count, 1, "the writes went to several nodes: \(writes)")
        XCTAssertEqual(Set(served.map(\.node)).count, 3)
    }

    func testTwoApprovalsThroughTheFrontRunTheToolOnce() async throws {
        let upstream = try startUpstream()
        let directory = TestFiles.directory("parley-front-tools")
        let tools = try MCPToolServer(directory: directory)
        let (web, front, nodes) = try cluster(upstream, tools.settings, directory: directory)
        for node in nodes { try await MCPToolServer.ready(node) }
        upstream.enqueue(ToolStreams.round(text: ["On it."], calls: [("c1", "test__delete_item", ["{\"item\": \"x\"}"])]))
        let id = try await web.conversation(["model": "openai:fake", "tools": ["test/*"]])
        let (_, assistant) = try await web.send(id, "delete x")
        let paused = try await web.events(assistant, mode: "text")
        XCTAssertEqual(paused.done?["status"] as? String, "awaiting_approval")
        let lastID = try XCTUnwrap(paused.events.compactMap { Int64($0.id) }.max())
        let stored = try await web.message(assistant)
        let callID = try XCTUnwrap(((stored["parts"] as? [[String: Any]])?.first { $0["type"] as? String == "tool_call" })?["id"] as? String)

        upstream.enqueue(UpstreamStreams.complete(["Deleted."]))
        let decision = "/api/messages/\(assistant)/tool_calls/\(callID)"
        async let one = web.call("POST", decision, json: ["decision": "approve"])
        async let two = web.call("POST", decision, json: ["decision": "approve"])
        let statuses = try await [one.status, two.status].sorted()
        XCTAssertEqual(statuses, [200, 409], "one decision")
        let resumed = try await web.events(assistant, mode: "text", lastEventID: lastID)
        XCTAssertEqual(resumed.done?["status"] as? String, "complete")
        let finished = try await web.finished(assistant)
        XCTAssertEqual(finished["content"] as? String, "On it.\n\nDeleted.")
        XCTAssertEqual(upstream.requests.count, 2, "the tool ran once and the model answered once")
        let decisions = try await front.served(atLeast: 2).filter { $0.path == decision }
        XCTAssertEqual(decisions.count, 2)
        XCTAssertNotEqual(decisions.first?.node, decisions.last?.node, "the two approvals reached two nodes")
    }

    func testTabsOnDifferentNodesSeeEveryChangeAndResumeExactly() async throws {
        let upstream = try startUpstream()
        let (web, front, _) = try cluster(upstream)
        let readyOne = FakeUpstream.Gate(), readyTwo = FakeUpstream.Gate()
        let twoCreated: @Sendable ([SSEEvent]) -> Bool = { $0.filter { $0.type == "conversation_created" }.count == 2 }
        async let one = web.userEvents(ready: readyOne, until: twoCreated)
        let isReadyOne = await readyOne.waitUntilOpen()
        async let two = web.userEvents(ready: readyTwo, until: twoCreated)
        let isReadyTwo = await readyTwo.waitUntilOpen()
        XCTAssertTrue(isReadyOne && isReadyTwo)
        let first = try await web.conversation(["title": "Erste"])
        let second = try await web.conversation(["title": "Zweite"])
        let (tabOne, tabTwo) = try await (one, two)
        for tab in [tabOne, tabTwo] {
            let created = tab.notifications.filter { $0.type == "conversation_created" }
            XCTAssertEqual(created.compactMap { ($0.data["conversation"] as? [String: Any])?["id"] as? String }, [first, second])
        }
        let tabs = try await front.served(atLeast: 4).filter { $0.path == "/api/events" }
        XCTAssertEqual(tabs.count, 2)
        XCTAssertNotEqual(tabs.first?.node, tabs.last?.node, "the two tabs were on two nodes: \(tabs)")

        // Each tab reconnects (to whichever node is next) with its first notification's id: exactly the second.
        for tab in [tabOne, tabTwo] {
            let firstID = try XCTUnwrap(tab.events.first { $0.type == "conversation_created" }?.id)
            let resumed = try await web.userEvents(lastEventID: firstID, window: 1)
            XCTAssertEqual(resumed.events.map(\.type), ["conversation_created", "ready"])
            XCTAssertEqual((resumed.notifications.first?.data["conversation"] as? [String: Any])?["id"] as? String, second)
        }
    }
}
