import Foundation
@testable import ParleyAccounts
import ParleyAuth
import ParleyHTTP
@testable import ParleyServer
import ParleyStore
import ParleyTestSupport
import XCTest

/// What a security review of team mode tried: guesses sent all at once, floods of password work,
/// huge names, planted cookies, Basic credentials from another site, token sprawl, and a leaked
/// token trying to keep itself alive.
final class AccountAbuseTests: XCTestCase {
    func testGuessesSentAllAtOnceAreCountedBeforeTheyAreChecked() async throws {
        let team = try startTeam(["PARLEY_LOGIN_ATTEMPTS": "5", "PARLEY_PASSWORD_MEMORY_KIB": "8192"])
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<20 {
                group.addTask {
                    try await team.parley.call("POST", "/api/auth/login",
                                               json: ["username": Team.admin.username, "password": "guess \(index)"]).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        XCTAssertEqual(statuses.filter { $0 == 401 }.count, 5, "only the limit's worth were checked: \(statuses)")
        XCTAssertEqual(statuses.filter { $0 == 429 }.count, 15, "\(statuses)")
    }

    func testAFloodOfPasswordWorkIsRefusedNotQueuedForEver() async throws {
        let work = PasswordWork(memoryKiB: 16_384, parallel: 1, waiting: 2)
        let hash = try await work.hash("correct horse battery")
        let outcomes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    do {
                        return try await work.verify("wrong", against: hash) ? "match" : "checked"
                    } catch let error as HTTPError {
                        return error.code
                    } catch {
                        return "\(error)"
                    }
                }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        XCTAssertGreaterThan(outcomes.filter { $0 == "busy" }.count, 0, "\(outcomes)")
        XCTAssertGreaterThan(outcomes.filter { $0 == "checked" }.count, 0, "\(outcomes)")
        XCTAssertEqual(outcomes.filter { $0 != "busy" && $0 != "checked" }, [String]())
        // Once the flood has drained, work is taken again.
        let afterwards = try await work.verify("correct horse battery", against: hash)
        XCTAssertTrue(afterwards)
    }

    func testAHugeUsernameGetsTheSameAnswer() async throws {
        let team = try startTeam()
        let reply = try await team.parley.call("POST", "/api/auth/login",
                                               json: ["username": String(repeating: "a", count: 300_000), "password": "whatever1"])
        XCTAssertEqual(reply.status, 401)
        XCTAssertEqual(reply.errorCode, "invalid_credentials")
    }

    func testAStaleCookiePlantedBeforeTheRealOneDoesNotLockTheUserOut() async throws {
        let team = try startTeam()
        let cookie = try await team.signIn()
        let answer = try await team.parley.call("GET", "/api/auth/me",
                                                headers: [("Cookie", "parley_session=ps_planted; \(cookie)")])
        XCTAssertEqual(answer.status, 200)
    }

    func testBasicCredentialsFromAnotherSiteDoNotSkipTheOriginCheck() async throws {
        let parley = try startParley()
        let basic = try await parley.call("POST", "/api/conversations", json: [:],
                                          headers: [("Origin", "https://evil.example"), ("Authorization", "Basic dTpw")])
        XCTAssertEqual(basic.status, 403, "a browser sends cached Basic credentials cross-site by itself")
        XCTAssertEqual(basic.errorCode, "cross_origin")
    }

    func testTokensAreCappedPerUser() async throws {
        let team = try startTeam()
        let cookie = try await team.signIn()
        let admin = try XCTUnwrap(try team.parley.app.store.user(username: Team.admin.username))
        for index in 0..<100 {
            _ = try team.parley.app.store.createToken(userID: admin.id, name: "t\(index)", digest: "digest-\(index)")
        }
        let refused = try await team.call("POST", "/api/tokens", cookie: cookie, json: ["name": "one too many"])
        XCTAssertEqual(refused.status, 409, refused.text)
    }

    func testSessionsAreCappedPerUserTheLeastRecentlyUsedGo() async throws {
        let team = try startTeam()
        let first = try await team.signIn()
        for _ in 0..<50 { _ = try await team.signIn() }
        let me = try await team.me(first)
        XCTAssertEqual(me, 401, "the 51st sign-in ended the least recently used session")
        let admin = try XCTUnwrap(try team.parley.app.store.user(username: Team.admin.username))
        XCTAssertEqual(try team.parley.app.store.sessions(userID: admin.id).count, 50)
    }

    func testALeakedTokenCannotMintTokensOrManageSessions() async throws {
        let team = try startTeam()
        let cookie = try await team.signIn()
        let created = try await team.call("POST", "/api/tokens", cookie: cookie, json: ["name": "script"])
        let token = try XCTUnwrap(created.json["token"] as? String)
        let tokenID = try XCTUnwrap(created.json["id"] as? String)
        for (method, path, body) in [("POST", "/api/tokens", ["name": "backdoor"] as [String: Any]),
                                     ("DELETE", "/api/tokens/\(tokenID)", [:]),
                                     ("POST", "/api/auth/password", ["current": Team.admin.password, "new": "attacker's choice"])] {
            let reply = try await team.call(method, path, token: token, json: body)
            XCTAssertEqual(reply.status, 403, "\(method) \(path): \(reply.text)")
            XCTAssertEqual(reply.errorCode, "session_required")
        }
        // The token still works for chat, and its owner (signed in) can revoke it.
        let chat = try await team.call("GET", "/api/conversations", token: token)
        XCTAssertEqual(chat.status, 200)
    }

    func testAnAdminsPasswordResetEndsTheAccountsTokens() async throws {
        let team = try startTeam()
        let bobID = try team.addMember("bob")
        let bob = try await team.signIn("bob", "member password")
        let created = try await team.call("POST", "/api/tokens", cookie: bob, json: ["name": "bob's script"])
        let token = try XCTUnwrap(created.json["token"] as? String)
        let admin = try await team.signIn()
        let reset = try await team.call("PATCH", "/api/users/\(bobID)", cookie: admin, json: ["password": "a fresh start"])
        XCTAssertEqual(reset.status, 200, reset.text)
        let after = try await team.call("GET", "/api/conversations", token: token)
        XCTAssertEqual(after.status, 401, "a reset locks out whoever held the account's tokens")
    }

    func testAHashMadeAtAnotherCostIsRemadeAtSignIn() async throws {
        let team = try startTeam()
        let old = try PasswordHasher(operations: 1, memoryBytes: 8192).hash("member password")
        let bob = try team.parley.app.store.createUser(username: "bob", displayName: "bob", role: .member, passwordHash: old)
        _ = try await team.signIn("bob", "member password")
        let stored = try XCTUnwrap(try team.parley.app.store.user(id: bob.id)?.passwordHash)
        XCTAssertNotEqual(stored, old)
        XCTAssertFalse(PasswordHasher(operations: PasswordHasher.interactive.operations, memoryBytes: 64 * 1024)
            .needsRehash(stored), "now at the server's cost")
        let again = try await team.canSignIn("bob", "member password")
        XCTAssertTrue(again)
    }
}
