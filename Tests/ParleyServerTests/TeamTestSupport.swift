import Foundation
import ParleyAuth
import ParleyStore
import ParleyTestSupport
import XCTest

/// Team-mode servers for the quota, model and proxy tests: an admin from the environment, members
/// made straight in the store, each with an API token (no Argon2 work per test user).
enum Team {
    static let admin = (username: "ada", password: "correct horse battery")
    static let settings = ["PARLEY_AUTH": "on", "PARLEY_ADMIN_USER": admin.username,
                           "PARLEY_ADMIN_PASSWORD": admin.password, "PARLEY_PASSWORD_MEMORY_KIB": "64"]

    /// Creates the user if needed and returns an `Authorization` header acting as them.
    static func bearer(_ parley: TestParley, _ username: String, role: User.Role = .member) throws -> (String, String) {
        let store = parley.app.store
        let user = try store.user(username: username)
            ?? store.createUser(username: username, displayName: username, role: role, passwordHash: nil)
        let secret = SecretToken.generate(prefix: "pt_")
        _ = try store.createToken(userID: user.id, name: "test", digest: SecretToken.digest(secret))
        return ("Authorization", "Bearer \(secret)")
    }
}

extension XCTestCase {
    /// A team-mode Parley offering the demo model, stopped when the test ends.
    func startTeamParley(_ extra: [String: String] = [:]) throws -> TestParley {
        try startParley(Team.settings.merging(extra) { $1 })
    }

    /// A team-mode Parley in front of `upstream` (model `openai:fake`), stopped when the test ends.
    func startTeamParley(upstream: FakeUpstream, _ extra: [String: String] = [:]) throws -> TestParley {
        try startParley(upstream: upstream, Team.settings.merging(extra) { $1 })
    }
}

extension TestParley {
    /// A request as `auth` (an `Authorization` or `Cookie` header).
    func call(_ method: String, _ path: String, as auth: (String, String), json: Any? = nil) async throws -> Reply {
        try await call(method, path, json: json, headers: [auth])
    }

    /// Creates a conversation as `auth`; returns its id.
    func conversation(as auth: (String, String), _ fields: [String: Any] = [:],
                      file: StaticString = #filePath, line: UInt = #line) async throws -> String {
        let reply = try await call("POST", "/api/conversations", as: auth, json: fields)
        XCTAssertEqual(reply.status, 201, reply.text, file: file, line: line)
        return try XCTUnwrap(reply.json["id"] as? String, file: file, line: line)
    }

    /// Sends as `auth`; returns the reply (201 with both messages, or the refusal).
    func send(as auth: (String, String), _ conversationID: String, _ content: String = "hello",
              extra: [String: Any] = [:]) async throws -> Reply {
        try await call("POST", "/api/conversations/\(conversationID)/messages", as: auth,
                       json: extra.merging(["content": content]) { $1 })
    }
}

extension TestParley.Reply {
    /// The assistant message's id of a 201 send.
    var assistantID: String? { (json["assistant_message"] as? [String: Any])?["id"] as? String }
    var errorMessage: String? { (json["error"] as? [String: Any])?["message"] as? String }
}
