import Foundation
import ParleyAuth
import ParleyEvents
import ParleyServer
import ParleyStore
import ParleyTestSupport
import Synchronization
import XCTest

/// A team-mode Parley and the steps every account test takes: add a member, sign in, call with a
/// cookie or a token.
struct Team {
    static let admin = (username: "ada", password: "correct horse battery")
    /// Argon2id at a small cost: the same code path, fast enough for many sign-ins.
    static let settings = ["PARLEY_AUTH": "on", "PARLEY_ADMIN_USER": admin.username,
                           "PARLEY_ADMIN_PASSWORD": admin.password, "PARLEY_PASSWORD_MEMORY_KIB": "64"]

    let parley: TestParley

    /// Creates the user if needed (without a password: no Argon2 work per test user) and returns an
    /// `Authorization` header acting as them.
    static func bearer(_ parley: TestParley, _ username: String, role: User.Role = .member) throws -> (String, String) {
        let store = parley.app.store
        let user = try store.user(username: username)
            ?? store.createUser(username: username, displayName: username, role: role, passwordHash: nil)
        let secret = SecretToken.generate(prefix: "pt_")
        _ = try store.createToken(userID: user.id, name: "test", digest: SecretToken.digest(secret))
        return ("Authorization", "Bearer \(secret)")
    }

    /// Adds a member straight in the store; returns its id.
    @discardableResult
    func addMember(_ username: String, password: String = "member password") throws -> String {
        let hash = try PasswordHasher(operations: PasswordHasher.interactive.operations, memoryBytes: 64 * 1024)
            .hash(password)
        return try parley.app.store.createUser(username: username, displayName: username, role: .member,
                                               passwordHash: hash).id
    }

    /// Signs in; returns the `Cookie` header value for later requests.
    func signIn(_ username: String = admin.username, _ password: String = admin.password,
                userAgent: String = "test", file: StaticString = #filePath, line: UInt = #line) async throws -> String {
        let reply = try await parley.call("POST", "/api/auth/login", json: ["username": username, "password": password],
                                          headers: [("User-Agent", userAgent)])
        XCTAssertEqual(reply.status, 200, reply.text, file: file, line: line)
        let setCookie = try XCTUnwrap(reply.headers["set-cookie"], file: file, line: line)
        return String(setCookie.split(separator: ";")[0])
    }

    /// Whether signing in with these works (200) or not (401).
    func canSignIn(_ username: String, _ password: String) async throws -> Bool {
        let reply = try await parley.call("POST", "/api/auth/login", json: ["username": username, "password": password])
        return reply.status == 200
    }

    func call(_ method: String, _ path: String, cookie: String?, json: Any? = nil) async throws -> TestParley.Reply {
        try await parley.call(method, path, json: json, headers: cookie.map { [("Cookie", $0)] } ?? [])
    }

    func call(_ method: String, _ path: String, token: String, json: Any? = nil) async throws -> TestParley.Reply {
        try await parley.call(method, path, json: json, headers: [("Authorization", "Bearer \(token)")])
    }

    /// The status `GET /api/auth/me` answers with this cookie: 200 while the session lives.
    func me(_ cookie: String) async throws -> Int {
        try await call("GET", "/api/auth/me", cookie: cookie).status
    }
}

extension XCTestCase {
    func startTeam(_ extra: [String: String] = [:]) throws -> Team {
        Team(parley: try startParley(Team.settings.merging(extra) { $1 }))
    }

    func startTeam(upstream: FakeUpstream, _ extra: [String: String] = [:]) throws -> Team {
        Team(parley: try startParley(upstream: upstream, Team.settings.merging(extra) { $1 }))
    }

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
    /// The `items` of a list answer.
    var items: [[String: Any]] { json["items"] as? [[String: Any]] ?? [] }
    var errorMessage: String { (json["error"] as? [String: Any])?["message"] as? String ?? "" }
    /// The assistant message's id of a 201 send.
    var assistantID: String? { (json["assistant_message"] as? [String: Any])?["id"] as? String }
}

/// `XCTUnwrap` for a value an `await` gives (XCTUnwrap's autoclosure cannot await).
func required<T>(_ value: T?, file: StaticString = #filePath, line: UInt = #line) throws -> T {
    try XCTUnwrap(value, file: file, line: line)
}

/// A clock a test moves forward instead of sleeping (`AccountSettings.now`): the system's time plus
/// every step taken so far.
final class SteppedClock: Sendable {
    private let skipped = Mutex<TimeInterval>(0)

    func now() -> Date {
        Date().addingTimeInterval(skipped.withLock { $0 })
    }

    func advance(by seconds: TimeInterval) {
        skipped.withLock { $0 += seconds }
    }
}
