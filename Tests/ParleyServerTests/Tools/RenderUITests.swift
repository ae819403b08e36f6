import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// `parley/render_ui` (issue 22) through a real server and a scripted upstream: A2UI messages stream as
/// `surface` events as soon as each is complete and valid, are stored as `surface` parts, replay exactly,
/// survive a stop; a surface's action makes the next user turn.
final class RenderUITests: UpstreamTestCase {
    override var settings: [String: String] { ["PARLEY_FRAME_INTERVAL_MS": "5"] }

    static let catalog = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
    static let messages: [String] = [
        #"{"version":"v0.9","createSurface":{"surfaceId":"trip","catalogId":"\#(catalog)"}}"#,
        #"{"version":"v0.9","updateComponents":{"surfaceId":"trip","components":[{"id":"root","component":"Column","children":["title","name","go"]},{"id":"title","component":"Text","text":"Réservez ✈️"},{"id":"name","component":"TextField","label":"Name","value":{"path":"/form/name"}}]}}"#,
        #"{"version":"v0.9","updateComponents":{"surfaceId":"trip","components":[{"id":"go","component":"Button","child":"go-label","action":{"event":{"name":"book","context":{"name":{"path":"/form/name"}}}}},{"id":"go-label","component":"Text","text":"Book"}]}}"#,
        #"{"version":"v0.9","updateDataModel":{"surfaceId":"trip","path":"/form","value":{"name":"Ada"}}}"#,
        // Refused: an image the model chose, and a catalog Parley does not know.
        #"{"version":"v0.9","updateComponents":{"surfaceId":"trip","components":[{"id":"root","component":"Image","url":"javascript:alert(1)"}]}}"#,
        #"{"version":"v0.9","createSurface":{"surfaceId":"other","catalogId":"https://evil.example/catalog.json"}}"#,
    ]

    static func arguments(_ messages: [String]) -> String { "{\"messages\":[" + messages.joined(separator: ",") + "]}" }

    /// The arguments cut every `size` bytes (inside strings, escapes and multi-byte characters alike).
    static func fragments(_ text: String, size: Int) -> [String] {
        let scalars = Array(text.unicodeScalars)
        return stride(from: 0, to: scalars.count, by: size).map {
            String(String.UnicodeScalarView(scalars[$0..<min($0 + size, scalars.count)]))
        }
    }

    private func draw(_ conversation: String, _ messages: [String] = RenderUITests.messages, size: Int = 7,
                      attached: FakeUpstream.Gate? = nil) async throws -> String {
        let round = ToolStreams.round(text: ["Here:"], calls: [("c1", "parley__render_ui",
                                                              Self.fragments(Self.arguments(messages), size: size))])
        upstream.enqueue(attached.map { UpstreamStreams.gated(round, start: $0) } ?? round)
        upstream.enqueue(UpstreamStreams.complete(["Done."]))
        return try await parley.send(conversation, "plan my trip").1
    }

    func testSurfacesStreamValidatedStoredAndReplayedExactly() async throws {
        let conversation = try await parley.conversation(["model": "openai:fake", "tools": ["parley/render_ui"]])
        let attached = FakeUpstream.Gate()
        let assistant = try await draw(conversation, attached: attached)
        let read = try await parley.events(assistant, attached: attached)
        XCTAssertEqual(read.done?["status"] as? String, "complete")
        let surfaces = read.events.filter { $0.type == "surface" }
        let sent = surfaces.map(read.data)
        XCTAssertEqual(sent.map { $0["surface_id"] as? String }, Array(repeating: "trip", count: 4))
        let expected = Self.messages.prefix(4).map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? NSDictionary }
        XCTAssertEqual(sent.map { ($0["message"] as? [String: Any]).map(NSDictionary.init(dictionary:)) }, Array(expected))
        // Nothing before the tree was complete: the first three go out together, after the third closed.
        let types = read.events.map(\.type)
        let firstSurface = try XCTUnwrap(types.firstIndex(of: "surface"))
        XCTAssertEqual(Array(types[firstSurface..<firstSurface + 3]), ["surface", "surface", "surface"])
        XCTAssertLessThan(firstSurface, try XCTUnwrap(types.firstIndex(of: "tool_result")))
        // (tail_html goes without an id: it repeats the last one.)
        let logged = read.events.filter { $0.type != "tail_html" }
        let ids = logged.compactMap { Int64($0.id) }
        XCTAssertEqual(ids, ids.sorted())
        XCTAssertEqual(Set(ids).count, ids.count)

        // The result tells the model what was drawn and what was refused.
        let result = try XCTUnwrap(read.events.first { $0.type == "tool_result" }.map(read.data))
        let structured = try XCTUnwrap((result["result"] as? [String: Any])?["structured_content"] as? [String: Any])
        XCTAssertEqual((structured["surfaces"] as? [[String: Any]])?.first?["messages"] as? Int, 4)
        XCTAssertEqual((structured["errors"] as? [[String: Any]])?.count, 2)
        let told = try XCTUnwrap(ToolStreams.toolMessages(upstream.requests[1]).first?["content"] as? String)
        XCTAssertTrue(told.contains("Parley files") && told.contains("not accepted"), told)

        // Stored as a surface part after the call, exactly what was sent.
        let stored = try await parley.finished(assistant)
        let parts = try XCTUnwrap(stored["parts"] as? [[String: Any]])
        XCTAssertEqual(parts.map { $0["type"] as? String }, ["text", "tool_call", "surface", "text"])
        XCTAssertEqual(parts[2]["surface_id"] as? String, "trip")
        XCTAssertEqual((parts[2]["messages"] as? [[String: Any]]).map { $0.map(NSDictionary.init(dictionary:)) },
                       sent.compactMap { ($0["message"] as? [String: Any]).map(NSDictionary.init(dictionary:)) })

        // Replay from any id is the log's tail, exactly: from each id around and among the surface events.
        let first = try XCTUnwrap(logged.firstIndex { $0.type == "surface" })
        let last = try XCTUnwrap(logged.lastIndex { $0.type == "tool_result" })
        for index in (first - 2)...(last + 1) {
            let event = logged[index]
            let resumed = try await parley.events(assistant, lastEventID: Int64(event.id))
            let replayed = resumed.events.filter { $0.type != "tail_html" }
            XCTAssertEqual(replayed.map(\.type), logged[(index + 1)...].map(\.type), "after \(event.id)")
            XCTAssertEqual(replayed.map(\.id), logged[(index + 1)...].map(\.id), "after \(event.id)")
            XCTAssertEqual(replayed.filter { $0.type == "surface" }.map(\.data),
                           logged[(index + 1)...].filter { $0.type == "surface" }.map(\.data))
        }
        // A snapshot carries the surface part.
        let late = try await parley.events(assistant)
        let snapshotParts = try XCTUnwrap(late.events.first.map(late.data)?["parts"] as? [[String: Any]])
        XCTAssertEqual(snapshotParts.map { $0["type"] as? String }, ["text", "tool_call", "surface", "text"])
    }

    func testAStopMidArgumentsKeepsWhatWasCompleteAndValid() async throws {
        let conversation = try await parley.conversation(["model": "openai:fake", "tools": ["parley/render_ui"]])
        let text = Self.arguments(Self.messages)
        let cut = try XCTUnwrap(text.range(of: "updateDataModel")).lowerBound
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(
            .eventStream(writes: [ToolStreams.callStart(id: "c1", name: "parley__render_ui")]
                             + Self.fragments(String(text[..<cut]), size: 11).map { ToolStreams.arguments($0) },
                         then: [.stall]), start: attached))
        let (_, assistant) = try await parley.send(conversation, "go")
        let read = try await parley.events(assistant, attached: attached,
                                           until: { $0.filter { $0.type == "surface" }.count == 3 })
        XCTAssertEqual(read.events.filter { $0.type == "surface" }.count, 3)
        let stop = try await parley.call("POST", "/api/messages/\(assistant)/stop")
        XCTAssertEqual(stop.status, 200, stop.text)
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(stored["status"] as? String, "stopped")
        let parts = try XCTUnwrap(stored["parts"] as? [[String: Any]])
        XCTAssertEqual(parts.map { $0["type"] as? String }, ["tool_call", "surface"])
        XCTAssertEqual(parts[0]["status"] as? String, "cancelled")
        XCTAssertEqual((parts[1]["messages"] as? [Any])?.count, 3)
    }

    func testAnActionMakesTheNextTurnAndTheRouteRefusesWhatDoesNotExist() async throws {
        let conversation = try await parley.conversation(["model": "openai:fake", "tools": ["parley/render_ui"]])
        let assistant = try await draw(conversation)
        _ = try await parley.finished(assistant)
        let path = "/api/messages/\(assistant)/surfaces/trip/actions"
        let action: [String: Any] = ["name": "book", "surfaceId": "trip", "sourceComponentId": "go",
                                     "timestamp": "2026-12-05T08:00:00Z", "context": ["name": "Grace"]]
        // Refusals first: an unknown message is 404, bad bodies and unknown surfaces or components 400.
        let missing = try await parley.call("POST", "/api/messages/nope/surfaces/trip/actions", json: action)
        XCTAssertEqual(missing.status, 404, missing.text)
        for bad: Any in [["name": "book"], ["version": "v0.8", "action": action], [1, 2],
                         action.merging(["surfaceId": "other"]) { $1 }, action.merging(["extra": 1]) { $1 }] {
            let reply = try await parley.call("POST", path, json: bad)
            XCTAssertEqual(reply.status, 400, "\(bad): \(reply.text)")
        }
        let unknownSurface = try await parley.call("POST", "/api/messages/\(assistant)/surfaces/other/actions",
                                                   json: action.merging(["surfaceId": "other"]) { $1 })
        XCTAssertEqual(unknownSurface.errorCode, "unknown_surface", unknownSurface.text)
        let unknownComponent = try await parley.call("POST", path, json: action.merging(["sourceComponentId": "ghost"]) { $1 })
        XCTAssertEqual(unknownComponent.errorCode, "unknown_component", unknownComponent.text)

        // The action, in its envelope: a user turn with an action part, and a reply like a send.
        upstream.enqueue(UpstreamStreams.complete(["Booked."]))
        let sent = try await parley.call("POST", path, json: ["version": "v0.9", "action": action])
        XCTAssertEqual(sent.status, 201, sent.text)
        let user = try XCTUnwrap(sent.json["user_message"] as? [String: Any])
        let reply = try XCTUnwrap((sent.json["assistant_message"] as? [String: Any])?["id"] as? String)
        let userParts = try XCTUnwrap(user["parts"] as? [[String: Any]])
        XCTAssertEqual(userParts.first?["type"] as? String, "action")
        XCTAssertEqual((userParts.first?["action"] as? [String: Any])?["sourceComponentId"] as? String, "go")
        _ = try await parley.finished(reply)
        let turns = try XCTUnwrap(upstream.requests.last?.jsonBody?["messages"] as? [[String: Any]])
        let readable = try XCTUnwrap(turns.last?["content"] as? String)
        XCTAssertTrue(readable.contains("interactive surface \"trip\"") && readable.contains("\"Grace\""), readable)

        // A reply that deletes the surface: it takes no more actions (409).
        upstream.enqueue(ToolStreams.round(calls: [("d1", "parley__render_ui",
            [#"{"messages":[{"version":"v0.9","deleteSurface":{"surfaceId":"trip"}}]}"#])]))
        upstream.enqueue(UpstreamStreams.complete(["Gone."]))
        let (_, deleting) = try await parley.send(conversation, "remove it")
        let deleted = try await parley.finished(deleting)
        XCTAssertEqual((deleted["parts"] as? [[String: Any]])?.compactMap { $0["type"] as? String },
                       ["tool_call", "surface", "text"])
        let refused = try await parley.call("POST", path, json: action)
        XCTAssertEqual(refused.status, 409, refused.text)
    }
}
