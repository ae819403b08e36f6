import Foundation
import ParleyAPI
import ParleySSE
import ParleyTestSupport
import XCTest

/// A reply that calls the built-in `parley/search_history` (no MCP server): the call streams as events,
/// runs at once (approval `never`), its result goes back to the model, and the answer after it is a new
/// text part, all stored as the message's parts.
final class BuiltInToolTests: UpstreamTestCase {
    override var settings: [String: String] { ["PARLEY_FRAME_INTERVAL_MS": "5"] }

    func testACallStreamsRunsAndTheModelAnswersWithItsResult() async throws {
        let earlier = try await parley.conversation(["title": "Croissant recipes"])
        let fragments = ["{\"qu", "ery\": \"croiss", "ant\", \"note\": \"caf", "é\"}"]
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(
            ToolStreams.round(text: ["Let me ", "look."], calls: [("call_x", "parley__search_history", fragments)]),
            start: attached))
        upstream.enqueue(UpstreamStreams.complete(["Found ", "it."]))
        let id = try await parley.conversation(["model": "openai:fake", "tools": ["parley/search_history"]])
        let (_, assistant) = try await parley.send(id, "find my croissant chat")
        let read = try await parley.events(assistant, mode: "text", attached: attached)

        XCTAssertEqual(read.done?["status"] as? String, "complete")
        let types = read.events.map(\.type)
        let calls = read.events.filter { $0.type == "tool_call" }.map(read.data)
        XCTAssertEqual(calls.map { $0["status"] as? String }, ["streaming", "running"])
        XCTAssertEqual(calls.first?["tool"] as? String, "parley/search_history")
        let callID = try XCTUnwrap(calls.first?["id"] as? String)
        let deltas = read.events.filter { $0.type == "tool_call_delta" }.map(read.data)
        XCTAssertEqual(deltas.compactMap { $0["arguments_delta"] as? String }.joined(), fragments.joined())
        XCTAssertEqual(Set(deltas.compactMap { $0["id"] as? String }), [callID])
        XCTAssertEqual((calls.last?["arguments"] as? [String: Any])?["query"] as? String, "croissant")
        let result = try XCTUnwrap(read.events.first { $0.type == "tool_result" }.map(read.data))
        XCTAssertEqual(result["status"] as? String, "complete")
        let structured = try XCTUnwrap((result["result"] as? [String: Any])?["structured_content"] as? [String: Any])
        let hits = try XCTUnwrap(structured["results"] as? [[String: Any]])
        XCTAssertEqual(hits.first?["conversation_id"] as? String, earlier)
        // Text, then the call's events, then the answer after it.
        let firstDelta = try XCTUnwrap(types.firstIndex(of: "delta"))
        let firstCall = try XCTUnwrap(types.firstIndex(of: "tool_call"))
        let resultAt = try XCTUnwrap(types.firstIndex(of: "tool_result"))
        XCTAssertLessThan(firstDelta, firstCall)
        XCTAssertLessThan(resultAt, try XCTUnwrap(types.lastIndex(of: "delta")))
        let ids = read.events.compactMap { Int64($0.id) }
        XCTAssertEqual(ids, ids.sorted(), "ids keep increasing")
        XCTAssertEqual(Set(ids).count, ids.count)

        let stored = try await parley.finished(assistant)
        XCTAssertEqual(stored["content"] as? String, "Let me look.\n\nFound it.")
        let parts = try XCTUnwrap(stored["parts"] as? [[String: Any]])
        XCTAssertEqual(parts.map { $0["type"] as? String }, ["text", "tool_call", "text"])
        XCTAssertEqual(parts[1]["status"] as? String, "complete")
        XCTAssertEqual(parts[1]["provider_id"] as? String, "call_x")
        XCTAssertEqual(parts[0]["html"] as? String, "<p>Let me look.</p>\n")
        XCTAssertEqual(parts[2]["html"] as? String, "<p>Found it.</p>\n")
        XCTAssertEqual(stored["html"] as? String, "<p>Let me look.</p>\n<p>Found it.</p>\n")

        // The model was offered the tool, then given the call and its result.
        let requests = upstream.requests
        XCTAssertEqual(requests.count, 2)
        let offered = (requests[0].jsonBody?["tools"] as? [[String: Any]])?.compactMap {
            ($0["function"] as? [String: Any])?["name"] as? String
        }
        XCTAssertEqual(offered, ["parley__search_history"])
        let messages = try XCTUnwrap(requests[1].jsonBody?["messages"] as? [[String: Any]])
        let call = try XCTUnwrap(messages.first { $0["tool_calls"] != nil })
        let sent = try XCTUnwrap((call["tool_calls"] as? [[String: Any]])?.first)
        let toolMessage = try XCTUnwrap(ToolStreams.toolMessages(requests[1]).first)
        XCTAssertEqual(toolMessage["tool_call_id"] as? String, sent["id"] as? String)
        XCTAssertTrue((toolMessage["content"] as? String ?? "").contains(earlier))
        XCTAssertEqual(call["content"] as? String, "Let me look.")
    }

    func testTheHTMLStreamPlacesTheCallBetweenTwoTextPartsAndASnapshotSaysWhere() async throws {
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(
            ToolStreams.round(text: ["# Plan\n\nFirst"], calls: [("c1", "parley__search_history", ["{\"query\":\"x\"}"])]),
            start: attached))
        upstream.enqueue(UpstreamStreams.complete(["Then *this*."]))
        let id = try await parley.conversation(["model": "openai:fake", "tools": ["parley/*"]])
        let (_, assistant) = try await parley.send(id, "go")
        let read = try await parley.events(assistant, attached: attached)
        XCTAssertEqual(read.done?["status"] as? String, "complete")
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(read.page.blocks.joined(), stored["html"] as? String, "streamed blocks == the stored render")

        // A late subscriber's snapshot walks the parts: each text part names its blocks.
        let late = try await parley.events(assistant)
        let snapshot = try XCTUnwrap(late.events.first.map(late.data))
        let parts = try XCTUnwrap(snapshot["parts"] as? [[String: Any]])
        XCTAssertEqual(parts.map { $0["type"] as? String }, ["text", "tool_call", "text"])
        XCTAssertEqual(parts[0]["first_block"] as? Int, 0)
        XCTAssertEqual(parts[0]["block_count"] as? Int, 2)
        XCTAssertEqual(parts[2]["first_block"] as? Int, 2)
        XCTAssertEqual(parts[2]["block_count"] as? Int, 1)
        XCTAssertEqual((snapshot["blocks"] as? [String])?.count, 3)
    }

    func testMalformedArgumentsAndAnUnknownToolAreErrorsTheModelIsTold() async throws {
        upstream.enqueue(ToolStreams.round(calls: [("a", "parley__search_history", ["{\"query\": \"x\""]),
                                                   ("b", "nowhere__tool", ["{}"])]))
        upstream.enqueue(UpstreamStreams.complete(["Sorry."]))
        let id = try await parley.conversation(["model": "openai:fake", "tools": ["parley/search_history"]])
        let (_, assistant) = try await parley.send(id, "go")
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(stored["status"] as? String, "complete")
        let calls = try XCTUnwrap(stored["parts"] as? [[String: Any]]).filter { $0["type"] as? String == "tool_call" }
        XCTAssertEqual(calls.map { $0["status"] as? String }, ["error", "error"])
        let results = ToolStreams.toolMessages(upstream.requests[1]).compactMap { $0["content"] as? String }
        XCTAssertEqual(results.count, 2)
        XCTAssertTrue(results[0].contains("not a JSON object"), results[0])
        XCTAssertTrue(results[1].contains("no tool named"), results[1])
    }

    func testAModelAskingPastTheRoundLimitEndsTheReplyWithToolRounds() async throws {
        parley = try startParley(upstream: upstream, ["PARLEY_MAX_TOOL_ROUNDS": "1"])
        upstream.enqueue(ToolStreams.round(calls: [("r1", "parley__search_history", ["{\"query\":\"a\"}"])]))
        upstream.enqueue(ToolStreams.round(calls: [("r2", "parley__search_history", ["{\"query\":\"b\"}"])]))
        let id = try await parley.conversation(["model": "openai:fake", "tools": ["parley/search_history"]])
        let (_, assistant) = try await parley.send(id, "go")
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(stored["status"] as? String, "complete")
        XCTAssertEqual(stored["finish_reason"] as? String, "tool_rounds")
        let calls = (stored["parts"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == "tool_call" }
        XCTAssertEqual(calls.map { $0["status"] as? String }, ["complete", "error"])
        XCTAssertEqual(upstream.requests.count, 2, "the second round's call never ran and the model was not asked again")
    }

    func testAConversationsToolsAreCheckedAndScopedToItsOwner() async throws {
        let bad = try await parley.call("POST", "/api/conversations", json: ["tools": ["nowhere/thing"]])
        XCTAssertEqual(bad.status, 400)
        XCTAssertEqual(bad.errorCode, "unknown_tool")
        let wrongType = try await parley.call("POST", "/api/conversations", json: ["tools": "parley/*"])
        XCTAssertEqual(wrongType.status, 400)
        // The field's limits (ToolRules): 128 entries of at most 200 characters.
        let tooMany = try await parley.call("POST", "/api/conversations",
                                            json: ["tools": Array(repeating: "parley/*", count: ToolRules.maxEntries + 1)])
        XCTAssertEqual(tooMany.status, 400)
        let atTheLimit = try await parley.call("POST", "/api/conversations",
                                               json: ["tools": Array(repeating: "parley/*", count: ToolRules.maxEntries)])
        XCTAssertEqual(atTheLimit.status, 201)
        let tooLong = try await parley.call("POST", "/api/conversations",
                                            json: ["tools": [String(repeating: "x", count: ToolRules.maxIDLength + 1)]])
        XCTAssertEqual(tooLong.status, 400)
        XCTAssertEqual(tooLong.errorCode, "invalid_request")
        let id = try await parley.conversation(["tools": ["parley/search_history", "parley/search_history"]])
        let shown = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(shown.json["tools"] as? [String], ["parley/search_history"])
        let cleared = try await parley.call("PATCH", "/api/conversations/\(id)", json: ["tools": []])
        XCTAssertEqual(cleared.json["tools"] as? [String], [])
        let missing = try await parley.call("PATCH", "/api/conversations/nope", json: ["tools": ["parley/*"]])
        XCTAssertEqual(missing.status, 404)
        let listed = try await parley.call("GET", "/api/tools")
        let items = try XCTUnwrap(listed.json["items"] as? [[String: Any]])
        XCTAssertEqual(items.compactMap { $0["id"] as? String }, ["parley/render_ui", "parley/search_history"])
        for item in items {
            XCTAssertEqual(item["approval"] as? String, "never")
            XCTAssertEqual(item["read_only"] as? Bool, true)
            XCTAssertEqual(item["available"] as? Bool, true)
        }
    }

    func testDecisionsAndPoliciesRefuseBadInputAndForeignIDs() async throws {
        upstream.enqueue(UpstreamStreams.complete(["Hi."]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "hi")
        _ = try await parley.finished(assistant)
        let badDecision = try await parley.call("POST", "/api/messages/\(assistant)/tool_calls/call_1",
                                                json: ["decision": "maybe"])
        XCTAssertEqual(badDecision.status, 400)
        let unknownCall = try await parley.call("POST", "/api/messages/\(assistant)/tool_calls/call_1",
                                                json: ["decision": "approve"])
        XCTAssertEqual(unknownCall.status, 404)
        let unknownMessage = try await parley.call("POST", "/api/messages/nope/tool_calls/call_1",
                                                   json: ["decision": "approve"])
        XCTAssertEqual(unknownMessage.status, 404)
        let content = try await parley.call("GET", "/api/messages/\(assistant)/tool_calls/call_1/content/0")
        XCTAssertEqual(content.status, 404)
        let badIndex = try await parley.call("GET", "/api/messages/\(assistant)/tool_calls/call_1/content/x")
        XCTAssertEqual(badIndex.status, 400)
        let policies = try await parley.call("GET", "/api/tool_policies")
        XCTAssertEqual((policies.json["items"] as? [Any])?.count, 0)
        let noTool = try await parley.call("DELETE", "/api/tool_policies")
        XCTAssertEqual(noTool.status, 400)
        let none = try await parley.call("DELETE", "/api/tool_policies?tool=parley%2Fsearch_history")
        XCTAssertEqual(none.status, 404)
    }
}
