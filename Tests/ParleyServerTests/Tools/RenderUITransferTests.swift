import Foundation
import ParleyTestSupport
import XCTest

/// Surfaces and actions travel with their conversation (issue 22): an export, its import and a fork carry
/// the `surface` and `action` parts exactly, and an imported surface is held to what render_ui accepts.
final class RenderUITransferTests: UpstreamTestCase {
    private func parts(_ message: [String: Any]) -> NSArray {
        ((message["parts"] as? [[String: Any]]) ?? []).filter { ["surface", "action"].contains($0["type"] as? String) }
            .map { NSDictionary(dictionary: $0) } as NSArray
    }

    func testExportImportAndForkCarrySurfacesAndActionsExactly() async throws {
        let conversation = try await parley.conversation(["model": "openai:fake", "tools": ["parley/render_ui"]])
        upstream.enqueue(ToolStreams.round(calls: [("c1", "parley__render_ui", [RenderUITests.arguments(Array(RenderUITests.messages.prefix(4)))])]))
        upstream.enqueue(UpstreamStreams.complete(["Done."]))
        let (_, drawn) = try await parley.send(conversation, "plan")
        _ = try await parley.finished(drawn)
        upstream.enqueue(UpstreamStreams.complete(["Booked."]))
        let action: [String: Any] = ["name": "book", "surfaceId": "trip", "sourceComponentId": "go",
                                     "timestamp": "2026-12-05T08:00:00Z", "context": ["name": "Ada"]]
        let acted = try await parley.call("POST", "/api/messages/\(drawn)/surfaces/trip/actions", json: action)
        XCTAssertEqual(acted.status, 201, acted.text)
        let reply = try XCTUnwrap((acted.json["assistant_message"] as? [String: Any])?["id"] as? String)
        _ = try await parley.finished(reply)
        let original = try await parley.call("GET", "/api/conversations/\(conversation)")
        let branch = try XCTUnwrap(original.json["messages"] as? [[String: Any]])
        let expected = branch.map(parts)
        XCTAssertEqual(expected.map(\.count), [0, 1, 1, 0])

        let export = try await parley.call("GET", "/api/conversations/\(conversation)/export?format=json")
        XCTAssertEqual(export.status, 200, export.text)
        let imported = try await parley.call("POST", "/api/import", body: Array(export.text.utf8))
        XCTAssertEqual(imported.status, 201, imported.text)
        let importedID = try XCTUnwrap((imported.json["items"] as? [[String: Any]])?.first?["id"] as? String)
        let copy = try await parley.call("GET", "/api/conversations/\(importedID)")
        XCTAssertEqual((copy.json["messages"] as? [[String: Any]])?.map(parts), expected)

        let fork = try await parley.call("POST", "/api/conversations/\(conversation)/fork", json: ["message_id": reply])
        XCTAssertEqual(fork.status, 201, fork.text)
        XCTAssertEqual((fork.json["messages"] as? [[String: Any]])?.map(parts), expected)

        // A hostile surface in a file is refused, naming the message.
        var document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(export.text.utf8)) as? [String: Any])
        var messages = try XCTUnwrap(document["messages"] as? [[String: Any]])
        let index = try XCTUnwrap(messages.firstIndex { ($0["parts"] as? [[String: Any]])?.contains { $0["type"] as? String == "surface" } ?? false })
        var storedParts = try XCTUnwrap(messages[index]["parts"] as? [[String: Any]])
        let surfaceAt = try XCTUnwrap(storedParts.firstIndex { $0["type"] as? String == "surface" })
        storedParts[surfaceAt]["messages"] = [["version": "v0.9", "updateComponents": ["surfaceId": "trip", "components": [
            ["id": "root", "component": "Image", "url": "javascript:alert(1)"]]]]]
        messages[index]["parts"] = storedParts
        document["messages"] = messages
        let hostile = try await parley.call("POST", "/api/import", json: document)
        XCTAssertEqual(hostile.status, 400, hostile.text)
        XCTAssertTrue(hostile.text.contains("Parley files"), hostile.text)
    }
}
