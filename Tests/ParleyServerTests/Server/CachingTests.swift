import Foundation
import ParleyTestSupport
import XCTest

/// Every API answer is one caller's data, so none may be kept by a shared proxy's cache or the
/// browser's disk: `Cache-Control: no-store`, errors and event streams too. What needs no caller
/// (health, the OpenAPI document, the page's files) keeps its own rule.
final class CachingTests: XCTestCase {
    func testTeamModeAnswersAreNotStoredErrorsAndSignInToo() async throws {
        let team = try startTeam()
        let login = try await team.parley.call("POST", "/api/auth/login",
                                               json: ["username": Team.admin.username, "password": Team.admin.password])
        XCTAssertEqual(login.status, 200)
        XCTAssertEqual(login.headers["cache-control"], "no-store", "it sets the session cookie")
        let cookie = try await team.signIn()
        let token = try Team.bearer(team.parley, Team.admin.username)
        let conversation = try await team.parley.conversation(as: ("Cookie", cookie), ["title": "private"])
        let answers: [(String, String, [(String, String)], Int)] = [
            ("GET", "/api/auth/me", [("Cookie", cookie)], 200),
            ("GET", "/api/conversations/\(conversation)", [("Cookie", cookie)], 200),
            ("GET", "/api/conversations", [token], 200),
            ("GET", "/api/users", [token], 200),
            ("GET", "/v1/models", [token], 200),
            ("GET", "/api/conversations/nope", [("Cookie", cookie)], 404),
            ("GET", "/api/auth/me", [], 401),
            ("GET", "/v1/models", [], 401),
            ("POST", "/api/users", [token], 403),
            ("POST", "/api/auth/login", [], 400),
        ]
        for (method, path, headers, status) in answers {
            let reply = try await team.parley.call(method, path, json: method == "POST" ? [:] : nil, headers: headers)
            XCTAssertEqual(reply.status, status, "\(method) \(path): \(reply.text)")
            XCTAssertEqual(reply.headers["cache-control"], "no-store", "\(method) \(path) \(status)")
        }
        let events = try await team.parley.userEvents(headers: [("Cookie", cookie)], window: 0.3)
        XCTAssertEqual(events.status, 200)
        XCTAssertEqual(events.headers["cache-control"], "no-store", "the user event stream")
        XCTAssertEqual(events.headers["content-type"], "text/event-stream; charset=utf-8")

        let health = try await team.parley.call("GET", "/api/health")
        XCTAssertNil(health.headers["cache-control"], "a constant without a caller: nothing to hide")
        let page = try await team.parley.call("GET", "/")
        XCTAssertEqual(page.headers["cache-control"], "no-cache", "the page's files keep their own rule")
    }

    func testLocalModeAnswersAndReplyStreamsAreNotStored() async throws {
        let parley = try startParley()
        let id = try await parley.conversation(["model": "demo"])
        let (_, assistant) = try await parley.send(id, "hello")
        let stream = try await parley.events(assistant)
        XCTAssertEqual(stream.headers["cache-control"], "no-store")
        XCTAssertEqual(stream.headers["x-accel-buffering"], "no")
        for path in ["/api/conversations/\(id)", "/api/messages/\(assistant)", "/api/models", "/v1/models",
                     "/api/messages/nope"] {
            let reply = try await parley.call("GET", path)
            XCTAssertEqual(reply.headers["cache-control"], "no-store", path)
        }
    }
}
