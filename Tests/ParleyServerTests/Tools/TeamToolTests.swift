import Foundation
import ParleyTestSupport
import XCTest

/// Tools in team mode: a server with `members: false` is invisible to members (listing, enabling, the
/// model's offer), and another user's reply can be neither approved nor have its result content read.
final class TeamToolTests: XCTestCase {
    func testAdminOnlyServersAreUnknownToMembersAndForeignRepliesAre404() async throws {
        let upstream = try startUpstream()
        let directory = TestFiles.directory("parley-team-tools")
        let tools = try MCPToolServer(directory: directory, adminOnly: true)
        let parley = try startTeamParley(upstream: upstream, tools.settings.merging(["PARLEY_FRAME_INTERVAL_MS": "5"]) { $1 })
        let admin = try Team.bearer(parley, Team.admin.username, role: .admin)
        let member = try Team.bearer(parley, "bo")
        try await MCPToolServer.ready(parley, as: [admin], servers: ["test", "free", "staff"])

        let adminSees = try await parley.call("GET", "/api/tools", as: admin).items.compactMap { $0["server"] as? String }
        XCTAssertTrue(adminSees.contains("staff"))
        let memberSees = try await parley.call("GET", "/api/tools", as: member).items.compactMap { $0["server"] as? String }
        XCTAssertFalse(memberSees.contains("staff"), "a member does not see admin-only servers")
        XCTAssertTrue(memberSees.contains("test"))
        let enabling = try await parley.call("POST", "/api/conversations", as: member, json: ["tools": ["staff/*"]])
        XCTAssertEqual(enabling.status, 400)
        XCTAssertEqual(enabling.errorCode, "unknown_tool")
        XCTAssertEqual(enabling.errorMessage, "'tools': there is no tool 'staff/*' you may use (see GET /api/tools).",
                       "the same answer as for a server that does not exist")

        // The admin's reply pauses for a destructive call; the member can neither decide it nor read it.
        upstream.enqueue(ToolStreams.round(calls: [("c1", "test__delete_item", ["{\"item\":\"x\"}"])]))
        let conversation = try await parley.conversation(as: admin, ["model": "openai:fake", "tools": ["test/*", "staff/*"]])
        let sent = try await parley.send(as: admin, conversation, "delete x")
        let assistant = try XCTUnwrap(sent.assistantID)
        let paused = try await parley.finished(assistant, headers: [admin])
        XCTAssertEqual(paused["status"] as? String, "awaiting_approval")
        let offered = (upstream.requests[0].jsonBody?["tools"] as? [[String: Any]])?.compactMap {
            ($0["function"] as? [String: Any])?["name"] as? String
        } ?? []
        XCTAssertTrue(offered.contains("staff__image"), "the admin's reply is offered the admin-only tools")
        let foreign = try await parley.call("POST", "/api/messages/\(assistant)/tool_calls/call_1", as: member,
                                            json: ["decision": "approve"])
        XCTAssertEqual(foreign.status, 404)
        let content = try await parley.call("GET", "/api/messages/\(assistant)/tool_calls/call_1/content/0", as: member)
        XCTAssertEqual(content.status, 404)
        let still = try await parley.call("GET", "/api/messages/\(assistant)", as: admin)
        XCTAssertEqual(still.json["status"] as? String, "awaiting_approval", "the foreign approval changed nothing")
    }
}
