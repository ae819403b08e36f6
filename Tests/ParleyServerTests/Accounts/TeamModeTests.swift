import Foundation
import ParleyAuth
import ParleyEvents
import ParleyServer
import ParleyStore
import ParleyTestSupport
import XCTest

/// Team mode over real HTTP: sign-in, sessions, tokens and the isolation of one member's
/// conversations from everyone else, admins included.
final class TeamModeTests: XCTestCase {
    static let admin = (username: "ada", password: "correct horse battery")
    /// Argon2id at a small cost: the same code path, fast enough for many sign-ins.
    static let team = ["PARLEY_AUTH": "on", "PARLEY_ADMIN_USER": admin.username,
                       "PARLEY_ADMIN_PASSWORD": admin.password, "PARLEY_PASSWORD_MEMORY_KIB": "64"]

    private func teamParley(_ extra: [String: String] = [:], clock: SteppedClock? = nil) throws -> TestParley {
        try startParley(Self.team.merging(extra) { $1 }) { configuration in
            if let clock { configuration.accounts.now = { clock.now() } }
        }
    }

    /// Adds a member straight in the store (the admin API is tested on its own).
    private func addMember(_ parley: TestParley, _ username: String, password: String = "member password") throws {
        let hash = try PasswordHasher(operations: PasswordHasher.interactive.operations, memoryBytes: 64 * 1024)
            .hash(password)
        _ = try parley.app.store.createUser(username: username, displayName: username, role: .member, passwordHash: hash)
    }

    /// Signs in; returns the `Cookie` header value for later requests.
    private func signIn(_ parley: TestParley, _ username: String, _ password: String,
                        file: StaticString = #filePath, line: UInt = #line) async throws -> String {
        let reply = try await parley.call("POST", "/api/auth/login", json: ["username": username, "password": password])
        XCTAssertEqual(reply.status, 200, reply.text, file: file, line: line)
        let setCookie = try XCTUnwrap(reply.headers["set-cookie"], file: file, line: line)
        return String(setCookie.split(separator: ";")[0])
    }

    private func call(_ parley: TestParley, _ method: String, _ path: String, cookie: String?, json: Any? = nil)
        async throws -> TestParley.Reply {
        try await parley.call(method, path, json: json, headers: cookie.map { [("Cookie", $0)] } ?? [])
    }

    // MARK: - Modes

    func testTheModeFollowsTheAddressUnlessSaid() throws {
        XCTAssertEqual(try ParleyConfiguration(environment: [:], arguments: []).accounts.mode, .local)
        XCTAssertEqual(try ParleyConfiguration(environment: ["PARLEY_HOST": "0.0.0.0"], arguments: []).accounts.mode, .team)
        XCTAssertEqual(try ParleyConfiguration(environment: ["PARLEY_HOST": "0.0.0.0", "PARLEY_AUTH": "off"],
                                               arguments: []).accounts.mode, .local)
        XCTAssertEqual(try ParleyConfiguration(environment: ["PARLEY_AUTH": "on"], arguments: []).accounts.mode, .team)
        XCTAssertThrowsError(try ParleyConfiguration(environment: ["PARLEY_AUTH": "maybe"], arguments: []))
        XCTAssertThrowsError(try ParleyConfiguration(environment: ["PARLEY_ADMIN_USER": "a", "PARLEY_ADMIN_PASSWORD": "short"],
                                                     arguments: [])) { XCTAssertTrue("\($0)".contains("PARLEY_ADMIN")) }
    }

    func testTeamModeWithoutAnAdminRefusesToStartAndSaysHow() throws {
        XCTAssertThrowsError(try TestParley(["PARLEY_AUTH": "on"])) { error in
            XCTAssertTrue("\(error)".contains("PARLEY_ADMIN_USER"), "\(error)")
            XCTAssertTrue("\(error)".contains("parley user add"), "\(error)")
        }
    }

    func testTheFirstAdminReceivesTheLocalConversations() async throws {
        let directory = TestFiles.directory("team-move")
        let local = try TestParley([:], directory: directory)
        let id = try await local.conversation(["title": "from local mode"])
        await local.stop()
        let team = try startParley(Self.team, directory: directory)
        let cookie = try await signIn(team, Self.admin.username, Self.admin.password)
        let shown = try await call(team, "GET", "/api/conversations/\(id)", cookie: cookie)
        XCTAssertEqual(shown.status, 200, shown.text)
        XCTAssertEqual(shown.json["title"] as? String, "from local mode")
    }

    func testLocalModeNeedsNoSignIn() async throws {
        let parley = try startParley()
        let me = try await parley.call("GET", "/api/auth/me")
        XCTAssertEqual(me.status, 200)
        XCTAssertEqual(me.json["mode"] as? String, "local")
        let login = try await parley.call("POST", "/api/auth/login", json: ["username": "x", "password": "yyyyyyyy"])
        XCTAssertEqual(login.status, 404)
    }

    // MARK: - Signing in

    func testEveryRouteButHealthAndSignInNeedsACaller() async throws {
        let parley = try teamParley()
        let routes = [("GET", "/api/models"), ("GET", "/api/conversations"), ("POST", "/api/conversations"),
                      ("GET", "/api/conversations/x"), ("PATCH", "/api/conversations/x"),
                      ("DELETE", "/api/conversations/x"), ("PUT", "/api/conversations/x/current"),
                      ("POST", "/api/conversations/x/messages"), ("GET", "/api/messages/x"),
                      ("GET", "/api/messages/x/stream"), ("POST", "/api/messages/x/stop"),
                      ("POST", "/api/messages/x/regenerate"), ("POST", "/api/messages/x/continue"),
                      ("GET", "/api/auth/me"), ("POST", "/api/auth/logout")]
        for (method, path) in routes {
            let reply = try await parley.call(method, path, json: method == "GET" ? nil : [:])
            XCTAssertEqual(reply.status, 401, "\(method) \(path): \(reply.text)")
            XCTAssertEqual(reply.errorCode, "unauthenticated", "\(method) \(path)")
        }
        let forged = try await parley.call("GET", "/api/conversations", headers: [("Cookie", "parley_session=ps_forged")])
        XCTAssertEqual(forged.status, 401)
        let answer1 = try await parley.call("GET", "/api/health")
        XCTAssertEqual(answer1.status, 200)
        let answer2 = try await parley.call("GET", "/")
        XCTAssertEqual(answer2.status, 200, "the page itself is public: it shows the sign-in form")
    }

    func testWrongPasswordUnknownAndDisabledUsersGetTheSameAnswer() async throws {
        let parley = try teamParley()
        try addMember(parley, "bob")
        let bob = try XCTUnwrap(try parley.app.store.user(username: "bob"))
        _ = try parley.app.store.updateUser(id: bob.id, disabled: true)
        var answers: Set<String> = []
        for (username, password) in [("ada", "wrong password"), ("nobody", "member password"), ("bob", "member password")] {
            let reply = try await parley.call("POST", "/api/auth/login", json: ["username": username, "password": password])
            XCTAssertEqual(reply.status, 401, username)
            XCTAssertNil(reply.headers["set-cookie"])
            answers.insert(reply.text)
        }
        XCTAssertEqual(answers, ["{\"error\":{\"code\":\"invalid_credentials\",\"message\":\"Wrong username or password.\"}}"])
        // Usernames are matched without case.
        _ = try await signIn(parley, "ADA", Self.admin.password)
    }

    /// An unknown or disabled user costs the same Argon2id work as a wrong password, so the answer's
    /// time does not tell which names exist. Medians of several tries, compared as ratios.
    func testFailedSignInsTakeTheSameTimeWhateverTheReason() async throws {
        let parley = try teamParley(["PARLEY_PASSWORD_MEMORY_KIB": "32768", "PARLEY_LOGIN_ATTEMPTS": "1000"])
        try addMember(parley, "bob")
        let bob = try XCTUnwrap(try parley.app.store.user(username: "bob"))
        _ = try parley.app.store.updateUser(id: bob.id, disabled: true)
        // Interleaved rounds: failures are padded to the slowest recent check, a target that follows the
        // machine's load, so three blocks one after the other would measure the load's drift.
        let names = [Self.admin.username, "nobody-here", "bob"]
        var times: [[Double]] = names.map { _ in [] }
        for _ in 0..<5 {
            for (index, username) in names.enumerated() {
                let started = ContinuousClock.now
                let reply = try await parley.call("POST", "/api/auth/login",
                                                  json: ["username": username, "password": "not the password"])
                XCTAssertEqual(reply.status, 401)
                let elapsed = ContinuousClock.now - started
                times[index].append(Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds))
            }
        }
        let medians = times.map { $0.sorted()[2] }
        let wrongPassword = medians[0], unknown = medians[1], disabled = medians[2]
        for (reason, time) in [("unknown user", unknown), ("disabled user", disabled)] {
            // Without the decoy an unknown name answers in well under a tenth of the time; the bounds
            // leave room for a loaded machine.
            XCTAssertGreaterThan(time / wrongPassword, 0.3, "\(reason): \(time) s against \(wrongPassword) s")
            XCTAssertLessThan(time / wrongPassword, 3.3, "\(reason): \(time) s against \(wrongPassword) s")
        }
    }

    func testTheSessionCookieIsHttpOnlyLaxAndEndsAtSignOut() async throws {
        let parley = try teamParley()
        let reply = try await parley.call("POST", "/api/auth/login",
                                          json: ["username": Self.admin.username, "password": Self.admin.password])
        let setCookie = try XCTUnwrap(reply.headers["set-cookie"])
        XCTAssertTrue(setCookie.hasPrefix("parley_session=ps_"), setCookie)
        for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] {
            XCTAssertTrue(setCookie.contains(attribute), setCookie)
        }
        XCTAssertFalse(setCookie.contains("Secure"), "plain http: a Secure cookie would never come back")
        XCTAssertEqual(reply.json["mode"] as? String, "team")
        XCTAssertEqual((reply.json["user"] as? [String: Any])?["role"] as? String, "admin")
        XCTAssertNil((reply.json["user"] as? [String: Any])?["password_hash"])
        let cookie = String(setCookie.split(separator: ";")[0])
        let answer3 = try await call(parley, "GET", "/api/auth/me", cookie: cookie)
        XCTAssertEqual(answer3.status, 200)
        let out = try await call(parley, "POST", "/api/auth/logout", cookie: cookie)
        XCTAssertEqual(out.status, 204)
        XCTAssertTrue(out.headers["set-cookie"]?.contains("Max-Age=0") ?? false)
        let answer4 = try await call(parley, "GET", "/api/auth/me", cookie: cookie)
        XCTAssertEqual(answer4.status, 401,
                       "the session is gone server-side, not only from the browser")
    }

    func testASessionBroughtToSignInIsReplacedNotKept() async throws {
        let parley = try teamParley()
        let first = try await signIn(parley, Self.admin.username, Self.admin.password)
        // A fixation attempt: the client signs in while presenting a session it already had.
        let reply = try await parley.call("POST", "/api/auth/login",
                                          json: ["username": Self.admin.username, "password": Self.admin.password],
                                          headers: [("Cookie", first)])
        let second = String(try XCTUnwrap(reply.headers["set-cookie"]).split(separator: ";")[0])
        XCTAssertNotEqual(first, second)
        let answer5 = try await call(parley, "GET", "/api/auth/me", cookie: first)
        XCTAssertEqual(answer5.status, 401)
        let answer6 = try await call(parley, "GET", "/api/auth/me", cookie: second)
        XCTAssertEqual(answer6.status, 200)
    }

    func testSecureCookieBehindATrustedHTTPSProxyOrWhenForced() async throws {
        let proxied = try teamParley(["PARLEY_TRUSTED_PROXIES": "127.0.0.1"])
        let body = ["username": Self.admin.username, "password": Self.admin.password]
        let viaProxy = try await proxied.call("POST", "/api/auth/login", json: body,
                                              headers: [("X-Forwarded-Proto", "https")])
        XCTAssertTrue(viaProxy.headers["set-cookie"]?.contains("Secure") ?? false)
        let untrusted = try teamParley()
        let spoofed = try await untrusted.call("POST", "/api/auth/login", json: body,
                                               headers: [("X-Forwarded-Proto", "https")])
        XCTAssertFalse(spoofed.headers["set-cookie"]?.contains("Secure") ?? true, "only a trusted proxy is believed")
        let forced = try teamParley(["PARLEY_COOKIE_SECURE": "on"])
        let plain = try await forced.call("POST", "/api/auth/login", json: body)
        XCTAssertTrue(plain.headers["set-cookie"]?.contains("Secure") ?? false)
    }

    func testAnIdleOrOldSessionEnds() async throws {
        try await assertSessionEnds(with: "PARLEY_SESSION_LIFETIME_SECONDS")
    }

    func testASessionUnusedForTheIdleTimeEnds() async throws {
        try await assertSessionEnds(with: "PARLEY_SESSION_IDLE_SECONDS")
    }

    /// A session answers until `setting` (1 s) has passed on the server's clock, then 401.
    private func assertSessionEnds(with setting: String, file: StaticString = #filePath,
                                   line: UInt = #line) async throws {
        let clock = SteppedClock()
        let parley = try teamParley([setting: "1"], clock: clock)
        let cookie = try await signIn(parley, Self.admin.username, Self.admin.password)
        let fresh = try await call(parley, "GET", "/api/auth/me", cookie: cookie)
        XCTAssertEqual(fresh.status, 200, file: file, line: line)
        clock.advance(by: 1.1)
        let ended = try await call(parley, "GET", "/api/auth/me", cookie: cookie)
        XCTAssertEqual(ended.status, 401, "\(setting) passed", file: file, line: line)
    }

    func testGuessingPasswordsIsSlowedPerNameAndPerAddress() async throws {
        let parley = try teamParley(["PARLEY_LOGIN_ATTEMPTS": "3"])
        for _ in 0..<3 {
            let reply = try await parley.call("POST", "/api/auth/login", json: ["username": "ada", "password": "guess1234"])
            XCTAssertEqual(reply.status, 401)
        }
        let blocked = try await parley.call("POST", "/api/auth/login",
                                            json: ["username": "ada", "password": Self.admin.password])
        XCTAssertEqual(blocked.status, 429, "even the right password waits once the name is blocked")
        XCTAssertEqual(blocked.errorCode, "too_many_attempts")
        let wait = try XCTUnwrap(Int(blocked.headers["retry-after"] ?? ""))
        XCTAssertGreaterThan(wait, 800)
        XCTAssertLessThanOrEqual(wait, 900)
    }

    func testBehindATrustedProxyEachClientIsCountedNotTheProxy() async throws {
        let proxied = try teamParley(["PARLEY_LOGIN_ATTEMPTS": "2", "PARLEY_TRUSTED_PROXIES": "127.0.0.1"])
        try addMember(proxied, "bob")
        for _ in 0..<3 {
            _ = try await proxied.call("POST", "/api/auth/login", json: ["username": "mallory", "password": "guess1234"],
                                       headers: [("X-Forwarded-For", "10.0.0.66")])
        }
        let other = try await proxied.call("POST", "/api/auth/login",
                                           json: ["username": "bob", "password": "member password"],
                                           headers: [("X-Forwarded-For", "10.0.0.7")])
        XCTAssertEqual(other.status, 200, "another client behind the same proxy signs in")
        let attacker = try await proxied.call("POST", "/api/auth/login",
                                              json: ["username": "bob", "password": "member password"],
                                              headers: [("X-Forwarded-For", "10.0.0.66")])
        XCTAssertEqual(attacker.status, 429, "the guessing client is held back")

        // Without a trusted proxy the header is the client's own word: ignored.
        let direct = try teamParley(["PARLEY_LOGIN_ATTEMPTS": "2"])
        for forwarded in ["10.0.0.1", "10.0.0.2", "10.0.0.3"] {
            _ = try await direct.call("POST", "/api/auth/login", json: ["username": "mallory", "password": "guess1234"],
                                      headers: [("X-Forwarded-For", forwarded)])
        }
        let spoofer = try await direct.call("POST", "/api/auth/login", json: ["username": "eve", "password": "guess1234"],
                                            headers: [("X-Forwarded-For", "10.0.0.4")])
        XCTAssertEqual(spoofer.status, 429, "a forged X-Forwarded-For does not buy new tries")
    }

    // MARK: - Tokens

    func testABearerTokenActsAsItsUserUntilRevoked() async throws {
        let parley = try teamParley()
        let admin = try XCTUnwrap(try parley.app.store.user(username: Self.admin.username))
        let secret = SecretToken.generate(prefix: "pt_")
        let token = try parley.app.store.createToken(userID: admin.id, name: "script", digest: SecretToken.digest(secret))
        let bearer = [("Authorization", "Bearer \(secret)")]
        let created = try await parley.call("POST", "/api/conversations", json: ["title": "by script"],
                                            headers: bearer + [("Origin", "https://elsewhere.example")])
        XCTAssertEqual(created.status, 201, "a token request is a script's: no Origin check")
        try parley.app.store.deleteToken(id: token.id, userID: admin.id)
        let revoked = try await parley.call("GET", "/api/conversations", headers: bearer)
        XCTAssertEqual(revoked.status, 401, "a revoked token is refused at once")
        let wrongScheme = try await parley.call("GET", "/api/conversations", headers: [("Authorization", "Basic \(secret)")])
        XCTAssertEqual(wrongScheme.status, 401)
    }

    /// A proxy that guards itself with Basic auth sends its `Authorization: Basic` with every request;
    /// Parley never issues Basic credentials, so it ignores them and the session cookie counts. Alone,
    /// or beside a wrong Bearer token (Parley's own scheme), it is 401 as before.
    func testBasicCredentialsBesideASessionCookieAreIgnored() async throws {
        let parley = try teamParley()
        let cookie = try await signIn(parley, Self.admin.username, Self.admin.password)
        for basic in ["Basic dTpw", "basic   dTpw", "Negotiate abc", "Basic"] {
            let me = try await parley.call("GET", "/api/auth/me", headers: [("Cookie", cookie), ("Authorization", basic)])
            XCTAssertEqual(me.status, 200, "\(basic): \(me.text)")
            XCTAssertEqual((me.json["user"] as? [String: Any])?["username"] as? String, Self.admin.username)
            let created = try await parley.call("POST", "/api/conversations", json: ["title": "behind a proxy"],
                                                headers: [("Cookie", cookie), ("Authorization", basic)])
            XCTAssertEqual(created.status, 201, "\(basic): \(created.text)")
            let alone = try await parley.call("GET", "/api/auth/me", headers: [("Authorization", basic)])
            XCTAssertEqual(alone.status, 401, "\(basic) with no other credential")
            XCTAssertEqual(alone.errorCode, "unauthenticated")
        }
        for bearer in ["Bearer pt_not-a-token", "Bearer", "bearer "] {
            let wrong = try await parley.call("GET", "/api/auth/me", headers: [("Cookie", cookie), ("Authorization", bearer)])
            XCTAssertEqual(wrong.status, 401, "\(bearer): a wrong token of Parley's own is refused, cookie or not")
        }
        let crossSite = try await parley.call("POST", "/api/conversations", json: [:],
                                              headers: [("Cookie", cookie), ("Authorization", "Basic dTpw"),
                                                        ("Origin", "https://evil.example")])
        XCTAssertEqual(crossSite.status, 403, "the cookie's request is still checked for its origin")
    }

    // MARK: - Isolation

    func testAnotherUsersIdsAnswer404OnEveryRouteAndChangeNothing() async throws {
        let parley = try teamParley()
        try addMember(parley, "bob")
        let ada = try await signIn(parley, Self.admin.username, Self.admin.password)
        let bob = try await signIn(parley, "bob", "member password")

        let created = try await call(parley, "POST", "/api/conversations", cookie: ada, json: ["title": "ada's plans"])
        let conversation = try XCTUnwrap(created.json["id"] as? String)
        let sent = try await call(parley, "POST", "/api/conversations/\(conversation)/messages", cookie: ada,
                                  json: ["content": "secret question"])
        XCTAssertEqual(sent.status, 201, sent.text)
        let user = try XCTUnwrap((sent.json["user_message"] as? [String: Any])?["id"] as? String)
        let assistant = try XCTUnwrap((sent.json["assistant_message"] as? [String: Any])?["id"] as? String)
        _ = try await parley.finished(assistant, headers: [("Cookie", ada)])

        let foreign: [(String, String, Any?)] = [
            ("GET", "/api/conversations/\(conversation)", nil),
            ("PATCH", "/api/conversations/\(conversation)", ["title": "mine now"]),
            ("PUT", "/api/conversations/\(conversation)/current", ["message_id": assistant]),
            ("POST", "/api/conversations/\(conversation)/messages", ["content": "hi"]),
            ("POST", "/api/conversations/\(conversation)/messages", ["content": "hi", "parent_id": assistant]),
            ("GET", "/api/messages/\(user)", nil),
            ("GET", "/api/messages/\(assistant)", nil),
            ("GET", "/api/messages/\(assistant)/stream", nil),
            ("GET", "/api/messages/\(assistant)/stream?mode=text", nil),
            ("POST", "/api/messages/\(assistant)/stop", [:]),
            ("POST", "/api/messages/\(assistant)/regenerate", [:]),
            ("POST", "/api/messages/\(assistant)/continue", [:]),
            ("DELETE", "/api/conversations/\(conversation)", nil),
        ]
        for (method, path, body) in foreign {
            let reply = try await call(parley, method, path, cookie: bob, json: body)
            XCTAssertEqual(reply.status, 404, "\(method) \(path): \(reply.text)")
            XCTAssertEqual(reply.errorCode, "not_found", "\(method) \(path)")
            XCTAssertFalse(reply.text.contains("secret"), "\(method) \(path)")
            // The same answer as an id that does not exist.
            let missing = try await call(parley, method, path.replacingOccurrences(of: conversation, with: "nope")
                .replacingOccurrences(of: assistant, with: "nope").replacingOccurrences(of: user, with: "nope"),
                cookie: bob, json: body)
            XCTAssertEqual(missing.status, 404, "\(method) \(path)")
        }
        let bobsList = try await call(parley, "GET", "/api/conversations", cookie: bob)
        XCTAssertEqual((bobsList.json["items"] as? [Any])?.count, 0)
        // Ada's conversation is untouched: same title, still two messages, one answer.
        let still = try await call(parley, "GET", "/api/conversations/\(conversation)", cookie: ada)
        XCTAssertEqual(still.json["title"] as? String, "ada's plans")
        XCTAssertEqual((still.json["messages"] as? [Any])?.count, 2)
        let siblings = ((still.json["messages"] as? [[String: Any]])?.last?["siblings"] as? [String: Any])?["count"] as? Int
        XCTAssertEqual(siblings, 1, "bob's regenerate made no sibling")
    }

    func testAnAdminCannotReadAMembersConversations() async throws {
        let parley = try teamParley()
        try addMember(parley, "bob")
        let bob = try await signIn(parley, "bob", "member password")
        let created = try await call(parley, "POST", "/api/conversations", cookie: bob, json: ["title": "bob's diary"])
        let conversation = try XCTUnwrap(created.json["id"] as? String)
        let ada = try await signIn(parley, Self.admin.username, Self.admin.password)
        let answer9 = try await call(parley, "GET", "/api/conversations/\(conversation)", cookie: ada)
        XCTAssertEqual(answer9.status, 404)
        let list = try await call(parley, "GET", "/api/conversations", cookie: ada)
        XCTAssertFalse(list.text.contains("bob's diary"))
    }
}
