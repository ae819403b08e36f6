import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// Tools across the nodes of one cluster: a reply paused for approval on node A needs no node; two
/// approvals sent at once to A and B run the tool once; the reply resumes on the node that took the
/// decision and a tab on the other node follows it from its last id, ids above the pause.
final class ClusterToolTests: XCTestCase {
    func testAnApprovalOnAnotherNodeResumesTheReplyAndRunsTheToolOnce() async throws {
        let services = try ClusterServices()
        let upstream = try startUpstream()
        let directory = TestFiles.directory("parley-cluster-tools")
        let tools = try MCPToolServer(directory: directory)
        let settings = try clusterSettings(services, ["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1",
                                                      "PARLEY_OPENAI_MODELS": "fake"].merging(tools.settings) { $1 })
        let a = try startParley(settings, directory: directory.appendingPathComponent("a"))
        let b = try startParley(settings, directory: directory.appendingPathComponent("b"))
        try await MCPToolServer.ready(a)
        try await MCPToolServer.ready(b)

        upstream.enqueue(ToolStreams.round(text: ["On it."], calls: [("c1", "test__delete_item", ["{\"item\": \"x\"}"])]))
        let id = try await a.conversation(["model": "openai:fake", "tools": ["test/*"]])
        let (_, assistant) = try await a.send(id, "delete x")
        let paused = try await b.events(assistant, mode: "text")
        XCTAssertEqual(paused.done?["status"] as? String, "awaiting_approval", "the pause, seen on the other node")
        let lastID = try XCTUnwrap(paused.events.compactMap { Int64($0.id) }.max())
        let stored = try await b.message(assistant)
        let callID = try XCTUnwrap(((stored["parts"] as? [[String: Any]])?.first { $0["type"] as? String == "tool_call" })?["id"] as? String)

        upstream.enqueue(UpstreamStreams.complete(["Deleted."]))
        async let onA = a.call("POST", "/api/messages/\(assistant)/tool_calls/\(callID)", json: ["decision": "approve"])
        async let onB = b.call("POST", "/api/messages/\(assistant)/tool_calls/\(callID)", json: ["decision": "approve"])
        let statuses = try await [onA.status, onB.status].sorted()
        XCTAssertEqual(statuses, [200, 409], "one decision, whichever node took it")

        let resumed = try await a.events(assistant, mode: "text", lastEventID: lastID)
        XCTAssertEqual(resumed.done?["status"] as? String, "complete")
        XCTAssertTrue(resumed.events.compactMap { Int64($0.id) }.allSatisfy { $0 > lastID }, "ids go on above the pause")
        let finished = try await b.finished(assistant)
        XCTAssertEqual(finished["content"] as? String, "On it.\n\nDeleted.")
        XCTAssertEqual(upstream.requests.count, 2, "the tool ran once and the model answered once")
        XCTAssertEqual(ToolStreams.toolMessages(upstream.requests[1]).compactMap { $0["content"] as? String }, ["deleted x"])
    }
}
