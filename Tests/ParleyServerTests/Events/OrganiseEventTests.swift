import Foundation
import ParleyTestSupport
import XCTest

/// Forks, imports and pins reach the user's other tabs (`GET /api/events`).
final class OrganiseEventTests: XCTestCase {
    func testForkImportAndPinAreToldToTheUsersStream() async throws {
        let parley = try startParley()
        let id = try await parley.conversation(["title": "Source"])
        let (_, assistant) = try await parley.send(id, "hello")
        _ = try await parley.finished(assistant)
        let file = try await parley.call("GET", "/api/conversations/\(id)/export")
        let ready = FakeUpstream.Gate()
        async let read = parley.userEvents(ready: ready, until: { events in
            events.filter { $0.type == "conversation_created" }.count >= 2
                && events.contains { $0.type == "conversation_updated" }
        })
        let attached = await ready.waitUntilOpen()
        XCTAssertTrue(attached)
        let pin = try await parley.call("PATCH", "/api/conversations/\(id)", json: ["pinned": true])
        XCTAssertEqual(pin.status, 200)
        let fork = try await parley.call("POST", "/api/conversations/\(id)/fork", json: ["message_id": assistant])
        let forkID = try XCTUnwrap(fork.json["id"] as? String)
        let imported = try await parley.call("POST", "/api/import", body: Array(file.text.utf8))
        let importedID = try XCTUnwrap(imported.exact["items"]?.array?.first?["id"]?.string)
        let events = try await read.notifications
        let updated = try XCTUnwrap(events.first { $0.type == "conversation_updated" }?.data["conversation"] as? [String: Any])
        XCTAssertEqual(updated["pinned"] as? Bool, true)
        let created = events.filter { $0.type == "conversation_created" }
            .compactMap { ($0.data["conversation"] as? [String: Any])?["id"] as? String }
        XCTAssertEqual(created, [forkID, importedID])
    }
}
