import Foundation
import ParleyTestSupport
import XCTest

/// `GET` and `PATCH /api/preferences`: the defaults, changes of any subset answered whole, a 400 naming
/// the field for an unknown field and for each bad value (nothing changed), one set per user in team
/// mode (nobody reads or changes another's), 401 without a caller, and the other tabs told.
final class PreferencesAPITests: XCTestCase {
    private static var defaults: [String: Any] {
        ["theme": "system", "default_model": NSNull(), "default_system_prompt": NSNull(), "send_key": "enter"]
    }

    private func assertPreferences(_ reply: TestParley.Reply, _ expected: [String: Any],
                                   file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(reply.status, 200, reply.text, file: file, line: line)
        XCTAssertEqual(Set(reply.json.keys), Set(expected.keys), reply.text, file: file, line: line)
        for (key, value) in expected {
            XCTAssertEqual(reply.json[key] as? NSObject, value as? NSObject, "\(key): \(reply.text)", file: file, line: line)
        }
    }

    func testDefaultsUntilChangedThenEachSubsetChangesOnlyItsFields() async throws {
        let parley = try startParley()
        assertPreferences(try await parley.call("GET", "/api/preferences"), Self.defaults)

        var expected = Self.defaults
        expected["theme"] = "dark"
        assertPreferences(try await parley.call("PATCH", "/api/preferences", json: ["theme": "dark"]), expected)
        expected["default_model"] = "demo"
        expected["default_system_prompt"] = "Answer in French."
        assertPreferences(try await parley.call("PATCH", "/api/preferences", json: [
            "default_model": "demo", "default_system_prompt": "Answer in French."]), expected)
        expected["send_key"] = "ctrl_enter"
        assertPreferences(try await parley.call("PATCH", "/api/preferences", json: ["send_key": "ctrl_enter"]), expected)
        assertPreferences(try await parley.call("PATCH", "/api/preferences", json: [:]), expected)
        assertPreferences(try await parley.call("GET", "/api/preferences"), expected)

        expected["default_model"] = NSNull()
        expected["default_system_prompt"] = NSNull()
        assertPreferences(try await parley.call("PATCH", "/api/preferences", json: [
            "default_model": NSNull(), "default_system_prompt": "  "]), expected)
    }

    func testPreferencesSurviveARestart() async throws {
        let directory = TestFiles.directory("parley-prefs")
        let first = try TestParley([:], directory: directory)
        _ = try await first.call("PATCH", "/api/preferences", json: ["theme": "light", "send_key": "ctrl_enter"])
        await first.stop()
        let second = try TestParley([:], directory: directory)
        var expected = Self.defaults
        expected["theme"] = "light"
        expected["send_key"] = "ctrl_enter"
        assertPreferences(try await second.call("GET", "/api/preferences"), expected)
        await second.stop()
    }

    func testUnknownFieldsAndBadValuesAre400NamingTheFieldAndChangeNothing() async throws {
        let parley = try startParley(["PARLEY_MAX_SYSTEM_PROMPT_BYTES": "100"])
        _ = try await parley.call("PATCH", "/api/preferences", json: ["theme": "dark"])
        let bad: [(String, Any)] = [
            ("colour", "dark"), ("theme", "blue"), ("theme", NSNull()), ("theme", 1), ("send_key", "shift_enter"),
            ("send_key", NSNull()), ("send_key", true), ("default_model", "nope:nothing"), ("default_model", 5),
            ("default_model", "a\u{0}b"), ("default_system_prompt", String(repeating: "x", count: 101)),
            ("default_system_prompt", ["text": "x"]), ("default_system_prompt", "a\u{0}b"),
        ]
        for (field, value) in bad {
            let reply = try await parley.call("PATCH", "/api/preferences", json: [field: value])
            XCTAssertEqual(reply.status, 400, "\(field)=\(value): \(reply.text)")
            XCTAssertEqual(reply.errorCode, "invalid_request", reply.text)
            XCTAssertTrue(reply.errorMessage.contains("'\(field)'"), "\(field): \(reply.errorMessage)")
            // With a good field beside it: the whole PATCH is refused.
            let other = field == "theme" ? "send_key" : "theme", good = field == "theme" ? "ctrl_enter" : "light"
            let mixed = try await parley.call("PATCH", "/api/preferences", json: [field: value, other: good])
            XCTAssertEqual(mixed.status, 400, mixed.text)
        }
        let limit = try await parley.call("PATCH", "/api/preferences",
                                          json: ["default_system_prompt": String(repeating: "x", count: 101)])
        XCTAssertTrue(limit.errorMessage.contains("PARLEY_MAX_SYSTEM_PROMPT_BYTES"), limit.errorMessage)
        let notJSON = try await parley.call("PATCH", "/api/preferences", body: Array("[1]".utf8))
        XCTAssertEqual(notJSON.status, 400, notJSON.text)
        XCTAssertEqual(notJSON.errorCode, "invalid_json")
        var expected = Self.defaults
        expected["theme"] = "dark"
        assertPreferences(try await parley.call("GET", "/api/preferences"), expected)
    }

    func testEachUserHasTheirOwnAndNobodyElsesInTeamMode() async throws {
        let parley = try startTeamParley(["PARLEY_MEMBER_MODELS": "demo"])
        let alice = try Team.bearer(parley, "alice"), bob = try Team.bearer(parley, "bob")
        let changed = try await parley.call("PATCH", "/api/preferences", as: alice,
                                            json: ["theme": "dark", "default_system_prompt": "Alice's prompt"])
        XCTAssertEqual(changed.status, 200, changed.text)
        assertPreferences(try await parley.call("GET", "/api/preferences", as: bob), Self.defaults)
        // Bob's change is his: Alice's stay.
        _ = try await parley.call("PATCH", "/api/preferences", as: bob, json: ["theme": "light"])
        let mine = try await parley.call("GET", "/api/preferences", as: alice)
        XCTAssertEqual(mine.json["theme"] as? String, "dark")
        XCTAssertEqual(mine.json["default_system_prompt"] as? String, "Alice's prompt")
        // No route takes a user: another's are out of reach (a query naming one is ignored).
        let aliceID = try XCTUnwrap(parley.app.store.user(username: "alice")).id
        let foreign = try await parley.call("GET", "/api/preferences?user_id=\(aliceID)", as: bob)
        XCTAssertEqual(foreign.json["theme"] as? String, "light", "bob sees his own")
        let foreignPatch = try await parley.call("PATCH", "/api/preferences", as: bob,
                                                 json: ["user_id": aliceID, "theme": "system"])
        XCTAssertEqual(foreignPatch.status, 400, foreignPatch.text)
        XCTAssertTrue(foreignPatch.errorMessage.contains("'user_id'"), foreignPatch.errorMessage)
        let after = try await parley.call("GET", "/api/preferences", as: alice)
        XCTAssertEqual(after.json["theme"] as? String, "dark")
    }

    func testTheDefaultModelMustBeOneTheCallerMayUse() async throws {
        let upstream = try startUpstream()
        let parley = try startTeamParley(upstream: upstream, ["PARLEY_MEMBER_MODELS": "demo"])
        let bob = try Team.bearer(parley, "bob"), root = try Team.bearer(parley, "root", role: .admin)
        let refused = try await parley.call("PATCH", "/api/preferences", as: bob, json: ["default_model": "openai:fake"])
        XCTAssertEqual(refused.status, 400, refused.text)
        XCTAssertTrue(refused.errorMessage.contains("'default_model'"), refused.errorMessage)
        XCTAssertTrue(refused.errorMessage.contains("PARLEY_MEMBER_MODELS"), refused.errorMessage)
        let allowed = try await parley.call("PATCH", "/api/preferences", as: bob, json: ["default_model": "demo"])
        XCTAssertEqual(allowed.json["default_model"] as? String, "demo", allowed.text)
        let admin = try await parley.call("PATCH", "/api/preferences", as: root, json: ["default_model": "openai:fake"])
        XCTAssertEqual(admin.json["default_model"] as? String, "openai:fake", admin.text)
        let unlisted = try await parley.call("PATCH", "/api/preferences", as: root,
                                             json: ["default_model": "openai:unlisted"])
        XCTAssertEqual(unlisted.status, 400, unlisted.text)
        XCTAssertTrue(unlisted.errorMessage.contains("'default_model'"), unlisted.errorMessage)
    }

    func testWithoutACallerTeamModeAnswers401() async throws {
        let parley = try startTeamParley()
        for method in ["GET", "PATCH"] {
            let reply = try await parley.call(method, "/api/preferences", json: method == "PATCH" ? ["theme": "dark"] : nil)
            XCTAssertEqual(reply.status, 401, "\(method): \(reply.text)")
            XCTAssertEqual(reply.errorCode, "unauthenticated")
        }
    }

    func testAChangeTellsTheUsersOtherTabsWithoutItsText() async throws {
        let parley = try startParley()
        let ready = FakeUpstream.Gate()
        async let read = parley.userEvents(ready: ready, until: { $0.contains { $0.type == "preferences_changed" } })
        let attached = await ready.waitUntilOpen()
        XCTAssertTrue(attached, "the stream began with ready")
        _ = try await parley.call("PATCH", "/api/preferences", json: ["default_system_prompt": "Secret prompt"])
        let events = try await read
        let told = try XCTUnwrap(events.notifications.first { $0.type == "preferences_changed" })
        XCTAssertTrue(told.data.isEmpty, "\(told.data)")
        XCTAssertFalse(events.raw.contains("Secret prompt"), "the prompt stays out of the event log")
    }
}
