import Foundation
import ParleyTestSupport
import XCTest

/// A user's own account over real HTTP: sessions, password change and API tokens.
final class AccountAPITests: XCTestCase {
    // MARK: - Sessions

    func testSessionsAreListedWithTheCurrentOneMarkedAndNoSecret() async throws {
        let team = try startTeam()
        let laptop = try await team.signIn(userAgent: "laptop browser")
        let phone = try await team.signIn(userAgent: "phone browser")
        let list = try await team.call("GET", "/api/auth/sessions", cookie: laptop)
        XCTAssertEqual(list.status, 200, list.text)
        XCTAssertEqual(list.items.count, 2)
        XCTAssertEqual(list.items.filter { $0["current"] as? Bool == true }.map { $0["user_agent"] as? String },
                       ["laptop browser"])
        XCTAssertEqual(list.items.filter { $0["current"] as? Bool == false }.count, 1)
        for item in list.items {
            XCTAssertEqual(Set(item.keys), ["id", "created_at", "last_used_at", "user_agent", "current"])
        }
        for cookie in [laptop, phone] {
            XCTAssertFalse(list.text.contains(String(cookie.split(separator: "=")[1])), "no secret in the list")
        }
    }

    func testRevokingASessionSignsItOutAndAnotherUsersIs404() async throws {
        let team = try startTeam()
        try team.addMember("bob")
        let ada = try await team.signIn()
        let adaElsewhere = try await team.signIn(userAgent: "elsewhere")
        let bob = try await team.signIn("bob", "member password")
        let bobsSession = try required(await team.call("GET", "/api/auth/sessions", cookie: bob).items.first?["id"] as? String)

        let foreign = try await team.call("DELETE", "/api/auth/sessions/\(bobsSession)", cookie: ada)
        XCTAssertEqual(foreign.status, 404, foreign.text)
        XCTAssertEqual(foreign.errorCode, "not_found")
        let missing = try await team.call("DELETE", "/api/auth/sessions/nope", cookie: ada)
        XCTAssertEqual(missing.text, foreign.text, "another user's session answers like a missing one")
        let bobsStill = try await team.me(bob)
        XCTAssertEqual(bobsStill, 200)

        let other = try required(await team.call("GET", "/api/auth/sessions", cookie: ada).items
            .first { $0["current"] as? Bool == false }?["id"] as? String)
        let revoked = try await team.call("DELETE", "/api/auth/sessions/\(other)", cookie: ada)
        XCTAssertEqual(revoked.status, 204, revoked.text)
        XCTAssertNil(revoked.headers["set-cookie"], "another session: this one's cookie stays")
        let revokedStatus = try await team.me(adaElsewhere)
        XCTAssertEqual(revokedStatus, 401)
        let again = try await team.call("DELETE", "/api/auth/sessions/\(other)", cookie: ada)
        XCTAssertEqual(again.status, 404)

        let current = try required(await team.call("GET", "/api/auth/sessions", cookie: ada).items.first?["id"] as? String)
        let selfRevoked = try await team.call("DELETE", "/api/auth/sessions/\(current)", cookie: ada)
        XCTAssertEqual(selfRevoked.status, 204)
        XCTAssertTrue(selfRevoked.headers["set-cookie"]?.contains("Max-Age=0") ?? false, "revoking this session signs out")
        let after = try await team.me(ada)
        XCTAssertEqual(after, 401)
    }

    // MARK: - Password

    func testAPasswordChangeEndsTheOtherSessionsAndKeepsThisOne() async throws {
        let team = try startTeam()
        let here = try await team.signIn(userAgent: "here")
        let there = try await team.signIn(userAgent: "there")
        let token = try required(await team.call("POST", "/api/tokens", cookie: here, json: ["name": "ci"])
            .json["token"] as? String)
        let changed = try await team.call("POST", "/api/auth/password", cookie: here,
                                          json: ["current": Team.admin.password, "new": "a brand new secret"])
        XCTAssertEqual(changed.status, 204, changed.text)
        let hereStatus = try await team.me(here)
        let thereStatus = try await team.me(there)
        XCTAssertEqual(hereStatus, 200, "the session that changed the password stays signed in")
        XCTAssertEqual(thereStatus, 401, "every other session is signed out")
        let sessions = try await team.call("GET", "/api/auth/sessions", cookie: here)
        XCTAssertEqual(sessions.items.count, 1)
        let oldWorks = try await team.canSignIn(Team.admin.username, Team.admin.password)
        let newWorks = try await team.canSignIn(Team.admin.username, "a brand new secret")
        XCTAssertFalse(oldWorks, "the old password stops working")
        XCTAssertTrue(newWorks)
        let byToken = try await team.call("GET", "/api/auth/me", token: token)
        XCTAssertEqual(byToken.status, 200, "API tokens are revoked on their own, not by a password change")
    }

    func testAWrongCurrentPasswordIs403AndChangesNothing() async throws {
        let team = try startTeam()
        let here = try await team.signIn()
        let there = try await team.signIn()
        let refused = try await team.call("POST", "/api/auth/password", cookie: here,
                                          json: ["current": "not my password", "new": "a brand new secret"])
        XCTAssertEqual(refused.status, 403, refused.text)
        XCTAssertEqual(refused.errorCode, "wrong_password")
        let hereStatus = try await team.me(here)
        let thereStatus = try await team.me(there)
        XCTAssertEqual(hereStatus, 200, "still signed in: 403, not 401")
        XCTAssertEqual(thereStatus, 200, "nothing ended")
        let oldWorks = try await team.canSignIn(Team.admin.username, Team.admin.password)
        XCTAssertTrue(oldWorks)
    }

    func testWrongCurrentPasswordsCountLikeFailedSignIns() async throws {
        let team = try startTeam(["PARLEY_LOGIN_ATTEMPTS": "2"])
        let cookie = try await team.signIn()
        for _ in 0..<2 {
            let refused = try await team.call("POST", "/api/auth/password", cookie: cookie,
                                              json: ["current": "guess guess", "new": "a brand new secret"])
            XCTAssertEqual(refused.status, 403)
        }
        let blocked = try await team.call("POST", "/api/auth/password", cookie: cookie,
                                          json: ["current": Team.admin.password, "new": "a brand new secret"])
        XCTAssertEqual(blocked.status, 429, blocked.text)
        XCTAssertEqual(blocked.errorCode, "too_many_attempts")
        XCTAssertNotNil(blocked.headers["retry-after"])
    }

    func testPasswordChangeRefusesBadInputNamingTheField() async throws {
        let team = try startTeam()
        let cookie = try await team.signIn()
        let cases: [([String: Any], String)] = [
            (["new": "a brand new secret"], "'current'"),
            (["current": Team.admin.password], "'new'"),
            (["current": Team.admin.password, "new": "short"], "'new'"),
            (["current": Team.admin.password, "new": "nul \u{0} inside"], "'new'"),
            (["current": Team.admin.password, "new": String(repeating: "x", count: 1025)], "'new'"),
            (["current": Team.admin.password, "new": 12_345_678], "'new'"),
        ]
        for (body, field) in cases {
            let reply = try await team.call("POST", "/api/auth/password", cookie: cookie, json: body)
            XCTAssertEqual(reply.status, 400, "\(body): \(reply.text)")
            XCTAssertEqual(reply.errorCode, "invalid_request")
            XCTAssertTrue(reply.errorMessage.contains(field), "\(body): \(reply.errorMessage)")
        }
        let unchanged = try await team.canSignIn(Team.admin.username, Team.admin.password)
        XCTAssertTrue(unchanged)
    }

    // MARK: - API tokens

    func testATokenIsShownOnceThenListedWithoutItsSecretAndRefusedAfterRevoke() async throws {
        let team = try startTeam()
        let cookie = try await team.signIn()
        let created = try await team.call("POST", "/api/tokens", cookie: cookie, json: ["name": "backup script"])
        XCTAssertEqual(created.status, 201, created.text)
        XCTAssertEqual(Set(created.json.keys), ["id", "name", "token", "created_at", "last_used_at"])
        XCTAssertEqual(created.headers["cache-control"], "no-store")
        let secret = try XCTUnwrap(created.json["token"] as? String)
        let id = try XCTUnwrap(created.json["id"] as? String)
        XCTAssertTrue(secret.hasPrefix("pt_"), secret)
        XCTAssertEqual(created.json["name"] as? String, "backup script")

        let used = try await team.call("GET", "/api/conversations", token: secret)
        XCTAssertEqual(used.status, 200, "the token acts as its user")

        let list = try await team.call("GET", "/api/tokens", cookie: cookie)
        XCTAssertEqual(list.status, 200)
        XCTAssertEqual(list.items.count, 1)
        XCTAssertEqual(list.items.first?["id"] as? String, id)
        XCTAssertEqual(Set(list.items.first?.keys ?? [:].keys), ["id", "name", "created_at", "last_used_at"])
        XCTAssertNotNil(list.items.first?["last_used_at"] as? String, "a used token shows when")
        XCTAssertFalse(list.text.contains(String(secret.dropFirst(3))), "the secret is never shown again")

        let revoked = try await team.call("DELETE", "/api/tokens/\(id)", cookie: cookie)
        XCTAssertEqual(revoked.status, 204, revoked.text)
        let reused = try await team.call("GET", "/api/conversations", token: secret)
        XCTAssertEqual(reused.status, 401, "a revoked token is refused at once")
        XCTAssertEqual(reused.errorCode, "unauthenticated")
        let again = try await team.call("DELETE", "/api/tokens/\(id)", cookie: cookie)
        XCTAssertEqual(again.status, 404)
        let empty = try await team.call("GET", "/api/tokens", cookie: cookie)
        XCTAssertEqual(empty.items.count, 0)
    }

    func testAnotherUsersTokenIs404AndKeepsWorking() async throws {
        let team = try startTeam()
        try team.addMember("bob")
        let ada = try await team.signIn()
        let bob = try await team.signIn("bob", "member password")
        let bobs = try await team.call("POST", "/api/tokens", cookie: bob, json: ["name": "bob's script"])
        let id = try XCTUnwrap(bobs.json["id"] as? String)
        let secret = try XCTUnwrap(bobs.json["token"] as? String)

        let foreign = try await team.call("DELETE", "/api/tokens/\(id)", cookie: ada)
        XCTAssertEqual(foreign.status, 404)
        let missing = try await team.call("DELETE", "/api/tokens/nope", cookie: ada)
        XCTAssertEqual(foreign.text, missing.text, "another user's token answers like a missing one")
        let adasList = try await team.call("GET", "/api/tokens", cookie: ada)
        XCTAssertEqual(adasList.items.count, 0)
        XCTAssertFalse(adasList.text.contains("bob's script"))
        let stillWorks = try await team.call("GET", "/api/auth/me", token: secret)
        XCTAssertEqual(stillWorks.status, 200)
    }

    func testTokenNamesAreChecked() async throws {
        let team = try startTeam()
        let cookie = try await team.signIn()
        let refused: [Any] = ["", "   ", String(repeating: "n", count: 101), "a\u{0}b", 42]
        for name in refused {
            let reply = try await team.call("POST", "/api/tokens", cookie: cookie, json: ["name": name])
            XCTAssertEqual(reply.status, 400, "\(name): \(reply.text)")
            XCTAssertTrue(reply.errorMessage.contains("'name'"), reply.errorMessage)
        }
        let absent = try await team.call("POST", "/api/tokens", cookie: cookie, json: [:])
        XCTAssertEqual(absent.status, 400)
        XCTAssertTrue(absent.errorMessage.contains("'name'"))
        let longest = try await team.call("POST", "/api/tokens", cookie: cookie,
                                          json: ["name": String(repeating: "é", count: 100)])
        XCTAssertEqual(longest.status, 201, longest.text)
        let list = try await team.call("GET", "/api/tokens", cookie: cookie)
        XCTAssertEqual(list.items.count, 1, "nothing refused was stored")
    }

    // MARK: - Modes and callers

    func testTheAccountRoutesNeedACaller() async throws {
        let team = try startTeam()
        for (method, path) in Self.routes {
            let reply = try await team.parley.call(method, path, json: method == "GET" ? nil : [:])
            XCTAssertEqual(reply.status, 401, "\(method) \(path): \(reply.text)")
            XCTAssertEqual(reply.errorCode, "unauthenticated")
        }
    }

    func testLocalModeHasNoAccountRoutes() async throws {
        let parley = try startParley()
        for (method, path) in Self.routes {
            let reply = try await parley.call(method, path, json: method == "GET" ? nil : ["name": "x"])
            XCTAssertEqual(reply.status, 404, "\(method) \(path): \(reply.text)")
            XCTAssertTrue(reply.errorMessage.contains("team mode"), reply.errorMessage)
        }
    }

    static let routes = [("GET", "/api/auth/sessions"), ("DELETE", "/api/auth/sessions/x"),
                         ("POST", "/api/auth/password"), ("POST", "/api/tokens"), ("GET", "/api/tokens"),
                         ("DELETE", "/api/tokens/x"), ("GET", "/api/users"), ("POST", "/api/users"),
                         ("PATCH", "/api/users/x"), ("GET", "/api/users/x/usage")]
}
