import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// A tool-using reply is replayed exactly from every one of its event ids (the calls, the argument
/// fragments, the results and the text around them), parallel calls keep their order, and regenerate
/// runs the tools again in a new sibling.
final class ToolResumeTests: UpstreamTestCase {
    override var settings: [String: String] { ["PARLEY_FRAME_INTERVAL_MS": "0"] }

    private let calls: [(id: String, name: String, fragments: [String])] = [
        ("a", "parley__search_history", ["{\"query\":", " \"caf", "é\"}"]),
        ("b", "parley__search_history", ["{\"query\": \"", "日本\"}"]),
    ]

    private func toolReply() async throws -> (conversation: String, assistant: String, events: [SSEEvent]) {
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(ToolStreams.round(text: ["Two ", "searches."], calls: calls),
                                               start: attached))
        upstream.enqueue(UpstreamStreams.complete(["Both ", "done."]))
        let id = try await parley.conversation(["model": "openai:fake", "tools": ["parley/search_history"]])
        let (_, assistant) = try await parley.send(id, "search twice")
        let read = try await parley.events(assistant, mode: "text", attached: attached)
        XCTAssertEqual(read.done?["status"] as? String, "complete")
        return (id, assistant, read.events)
    }

    func testEveryEventIDResumesExactlyTheRest() async throws {
        let (_, assistant, events) = try await toolReply()
        let logged = events.filter { !$0.id.isEmpty }
        XCTAssertTrue(logged.contains { $0.type == "tool_call_delta" })
        for (index, event) in logged.enumerated() where event.type != "done" && index > 0 {
            guard let id = Int64(event.id) else { continue }
            let resumed = try await parley.events(assistant, mode: "text", lastEventID: id)
            let expected = logged[(index + 1)...].map { "\($0.id) \($0.type) \($0.data)" }
            XCTAssertEqual(resumed.events.filter { !$0.id.isEmpty }.map { "\($0.id) \($0.type) \($0.data)" },
                           Array(expected), "resumed after event \(index) (\(event.type))")
        }
    }

    func testParallelCallsKeepTheirOrderInPartsAndInTheNextRequest() async throws {
        let (_, assistant, _) = try await toolReply()
        let stored = try await parley.finished(assistant)
        let parts = try XCTUnwrap(stored["parts"] as? [[String: Any]])
        let toolParts = parts.filter { $0["type"] as? String == "tool_call" }
        XCTAssertEqual(toolParts.map { $0["provider_id"] as? String }, ["a", "b"])
        XCTAssertEqual(toolParts.map { ($0["arguments"] as? [String: Any])?["query"] as? String }, ["café", "日本"])
        let answered = ToolStreams.toolMessages(upstream.requests[1]).compactMap { $0["tool_call_id"] as? String }
        let asked = ((upstream.requests[1].jsonBody?["messages"] as? [[String: Any]])?
            .first { $0["tool_calls"] != nil }?["tool_calls"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
        XCTAssertEqual(answered, asked, "results in call order")
        XCTAssertEqual(answered.count, 2)
    }

    func testRegenerateRunsTheToolsAgainInASibling() async throws {
        let (_, assistant, _) = try await toolReply()
        _ = try await parley.finished(assistant)
        upstream.enqueue(ToolStreams.round(calls: [("r", "parley__search_history", ["{\"query\":\"again\"}"])]))
        upstream.enqueue(UpstreamStreams.complete(["Again."]))
        let regenerated = try await parley.call("POST", "/api/messages/\(assistant)/regenerate")
        XCTAssertEqual(regenerated.status, 201)
        let sibling = try XCTUnwrap(regenerated.json["id"] as? String)
        let stored = try await parley.finished(sibling)
        XCTAssertEqual(stored["content"] as? String, "Again.")
        let toolParts = (stored["parts"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == "tool_call" }
        XCTAssertEqual(toolParts.map { $0["status"] as? String }, ["complete"])
        XCTAssertEqual(upstream.requests.count, 4, "the sibling's tool ran and the model answered it")
        // The sibling's context is the branch up to the user message: the first answer's rounds are not in it.
        let context = upstream.requests[2].jsonBody?["messages"] as? [[String: Any]] ?? []
        XCTAssertFalse(context.contains { $0["role"] as? String == "tool" })
    }
}
