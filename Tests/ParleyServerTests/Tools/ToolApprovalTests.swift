import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// Calls that ask first, through a real MCP server: the reply pauses (`awaiting_approval`, durable across a
/// restart), each call is decided once, the last decision resumes the reply with event ids above the last,
/// "always allow" is remembered per user, and a stop during a run cancels the call at the server.
final class ToolApprovalTests: XCTestCase {
    private var upstream: FakeUpstream!
    private var directory: URL!
    private var tools: MCPToolServer!

    override func setUp() async throws {
        upstream = try startUpstream()
        directory = TestFiles.directory("parley-tools")
        tools = try MCPToolServer(directory: directory)
    }

    private func start() async throws -> TestParley {
        let parley = try startParley(["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1", "PARLEY_OPENAI_MODELS": "fake",
                                      "PARLEY_FRAME_INTERVAL_MS": "5"].merging(tools.settings) { $1 },
                                     directory: directory)
        try await MCPToolServer.ready(parley)
        return parley
    }

    private func askToDelete(_ parley: TestParley, item: String = "x") async throws -> (String, String) {
        upstream.enqueue(ToolStreams.round(text: ["On it."], calls: [("c1", "test__delete_item", ["{\"item\": \"\(item)\"}"])]))
        let id = try await parley.conversation(["model": "openai:fake", "tools": ["test/*"]])
        let (_, assistant) = try await parley.send(id, "delete \(item)")
        return (id, assistant)
    }

    func testADestructiveCallWaitsAndTwoApprovalsRunItOnce() async throws {
        let parley = try await start()
        let (_, assistant) = try await askToDelete(parley)
        let paused = try await parley.events(assistant, mode: "text")
        XCTAssertEqual(paused.done?["status"] as? String, "awaiting_approval")
        let stored = try await parley.message(assistant)
        XCTAssertEqual(stored["status"] as? String, "awaiting_approval")
        let asking = try XCTUnwrap((stored["parts"] as? [[String: Any]])?.first { $0["type"] as? String == "tool_call" })
        XCTAssertEqual(asking["status"] as? String, "awaiting_approval")
        XCTAssertEqual(asking["tool"] as? String, "test/delete_item")
        let callID = try XCTUnwrap(asking["id"] as? String)
        XCTAssertEqual(upstream.requests.count, 1, "nothing ran, the model was not asked again")
        let lastID = try XCTUnwrap(paused.events.compactMap { Int64($0.id) }.max())

        upstream.enqueue(UpstreamStreams.complete(["Deleted."]))
        async let first = parley.call("POST", "/api/messages/\(assistant)/tool_calls/\(callID)", json: ["decision": "approve"])
        async let second = parley.call("POST", "/api/messages/\(assistant)/tool_calls/\(callID)", json: ["decision": "approve"])
        let statuses = try await [first.status, second.status].sorted()
        XCTAssertEqual(statuses, [200, 409])

        let resumed = try await parley.events(assistant, mode: "text", lastEventID: lastID)
        XCTAssertEqual(resumed.done?["status"] as? String, "complete")
        XCTAssertTrue(resumed.events.compactMap { Int64($0.id) }.allSatisfy { $0 > lastID }, "ids go on above the pause")
        let result = try XCTUnwrap(resumed.events.first { $0.type == "tool_result" }.map(resumed.data))
        XCTAssertEqual(result["status"] as? String, "complete")
        let finished = try await parley.finished(assistant)
        XCTAssertEqual(finished["content"] as? String, "On it.\n\nDeleted.")
        XCTAssertEqual(upstream.requests.count, 2, "the tool ran once and the model answered once")
        let told = ToolStreams.toolMessages(upstream.requests[1]).compactMap { $0["content"] as? String }
        XCTAssertEqual(told, ["deleted x"])
    }

    func testADenialIsToldToTheModelAndAForeignOrUnknownCallIsRefused() async throws {
        let parley = try await start()
        let (_, assistant) = try await askToDelete(parley)
        _ = try await parley.events(assistant)
        let unknown = try await parley.call("POST", "/api/messages/\(assistant)/tool_calls/call_9", json: ["decision": "deny"])
        XCTAssertEqual(unknown.status, 404)
        let continued = try await parley.call("POST", "/api/messages/\(assistant)/continue")
        XCTAssertEqual(continued.status, 409)
        XCTAssertEqual(continued.errorCode, "awaiting_approval")
        upstream.enqueue(UpstreamStreams.complete(["Understood."]))
        let denied = try await parley.call("POST", "/api/messages/\(assistant)/tool_calls/call_1", json: ["decision": "deny"])
        XCTAssertEqual(denied.status, 200)
        let finished = try await parley.finished(assistant)
        let call = try XCTUnwrap((finished["parts"] as? [[String: Any]])?.first { $0["type"] as? String == "tool_call" })
        XCTAssertEqual(call["status"] as? String, "denied")
        let told = ToolStreams.toolMessages(upstream.requests[1]).compactMap { $0["content"] as? String }
        XCTAssertEqual(told, ["The user denied this tool call."])
    }

    func testAlwaysAllowIsRememberedAndCanBeTakenBack() async throws {
        let parley = try await start()
        let (id, assistant) = try await askToDelete(parley)
        _ = try await parley.events(assistant)
        upstream.enqueue(UpstreamStreams.complete(["Done."]))
        let approved = try await parley.call("POST", "/api/messages/\(assistant)/tool_calls/call_1",
                                             json: ["decision": "approve", "remember": true])
        XCTAssertEqual(approved.status, 200)
        _ = try await parley.finished(assistant)
        let policies = try await parley.call("GET", "/api/tool_policies")
        XCTAssertEqual((policies.json["items"] as? [[String: Any]])?.compactMap { $0["tool"] as? String }, ["test/delete_item"])

        upstream.enqueue(ToolStreams.round(calls: [("c2", "test__delete_item", ["{\"item\": \"y\"}"])]))
        upstream.enqueue(UpstreamStreams.complete(["Done again."]))
        let (_, second) = try await parley.send(id, "and y")
        let ranAtOnce = try await parley.finished(second)
        XCTAssertEqual(ranAtOnce["status"] as? String, "complete", "remembered: no question this time")

        let forgot = try await parley.call("DELETE", "/api/tool_policies?tool=test%2Fdelete_item")
        XCTAssertEqual(forgot.status, 204)
        upstream.enqueue(ToolStreams.round(calls: [("c3", "test__delete_item", ["{\"item\": \"z\"}"])]))
        let (_, third) = try await parley.send(id, "and z")
        let asks = try await parley.finished(third)
        XCTAssertEqual(asks["status"] as? String, "awaiting_approval")
    }

    func testAWaitingReplySurvivesARestartAndIsApprovedAfterIt() async throws {
        var parley = try await start()
        let (_, assistant) = try await askToDelete(parley)
        _ = try await parley.events(assistant)
        await parley.stop()
        parley = try await start()
        let stored = try await parley.message(assistant)
        XCTAssertEqual(stored["status"] as? String, "awaiting_approval", "a restart changes nothing")
        upstream.enqueue(UpstreamStreams.complete(["Deleted after the restart."]))
        let approved = try await parley.call("POST", "/api/messages/\(assistant)/tool_calls/call_1", json: ["decision": "approve"])
        XCTAssertEqual(approved.status, 200)
        let finished = try await parley.finished(assistant)
        XCTAssertEqual(finished["status"] as? String, "complete")
        XCTAssertEqual(ToolStreams.toolMessages(upstream.requests.last!).compactMap { $0["content"] as? String }, ["deleted x"])
    }

    func testAStopDuringARunCancelsTheCallAtTheServerAndContinueTellsTheModel() async throws {
        let parley = try await start()
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(ToolStreams.round(calls: [("s1", "free__slow", ["{\"seconds\": 5}"])]),
                                               start: attached))
        let id = try await parley.conversation(["model": "openai:fake", "tools": ["free/slow"]])
        let (_, assistant) = try await parley.send(id, "sleep")
        _ = try await parley.events(assistant, mode: "text", attached: attached) { events in
            events.contains { $0.type == "tool_call" && $0.data.contains("\"running\"") }
        }
        let stopped = try await parley.call("POST", "/api/messages/\(assistant)/stop")
        XCTAssertEqual(stopped.json["status"] as? String, "stopped")
        let call = try XCTUnwrap((stopped.json["parts"] as? [[String: Any]])?.first { $0["type"] as? String == "tool_call" })
        XCTAssertEqual(call["status"] as? String, "cancelled")
        let cancelFile = tools.cancelFile
        let seen = await Deadline(.seconds(10)).wait(every: .milliseconds(50)) {
            (try? String(contentsOfFile: cancelFile, encoding: .utf8))?.contains("cancelled 5") ?? false
        }
        XCTAssertTrue(seen, "the MCP server saw the call cancelled")

        upstream.enqueue(UpstreamStreams.complete(["Fine, I stopped."]))
        let continued = try await parley.call("POST", "/api/messages/\(assistant)/continue")
        XCTAssertEqual(continued.status, 200)
        let finished = try await parley.finished(assistant)
        XCTAssertEqual(finished["status"] as? String, "complete")
        let told = ToolStreams.toolMessages(upstream.requests[1]).compactMap { $0["content"] as? String }
        XCTAssertEqual(told.count, 1)
        XCTAssertTrue(told[0].contains("cancelled"), told[0])
    }

    func testAnImageResultIsServedWithItsTypeAndOnlyToItsOwner() async throws {
        let parley = try await start()
        upstream.enqueue(ToolStreams.round(calls: [("i1", "free__image", ["{}"])]))
        upstream.enqueue(UpstreamStreams.complete(["A pixel."]))
        let id = try await parley.conversation(["model": "openai:fake", "tools": ["free/image"]])
        let (_, assistant) = try await parley.send(id, "draw")
        let finished = try await parley.finished(assistant)
        let call = try XCTUnwrap((finished["parts"] as? [[String: Any]])?.first { $0["type"] as? String == "tool_call" })
        XCTAssertEqual(call["status"] as? String, "complete")
        let url = parley.base + "/api/messages/\(assistant)/tool_calls/call_1/content/0"
        let image = try await Blocking.run { try TestHTTPClient().request("GET", url, timeout: 10) }
        XCTAssertEqual(image.status, 200)
        XCTAssertEqual(image.header("Content-Type"), "image/png")
        XCTAssertTrue(image.header("Content-Security-Policy")?.contains("sandbox") ?? false, "a sandboxed answer")
        XCTAssertEqual(Array(image.body.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
        let beyond = try await parley.call("GET", "/api/messages/\(assistant)/tool_calls/call_1/content/5")
        XCTAssertEqual(beyond.status, 404)
    }
}
