import Foundation
import ParleyTestSupport
import XCTest

/// Accounts as an admin manages them, over real HTTP: members are refused, the last admin is
/// kept, disabling ends everything the user had running, usage is counts only.
final class AdminAPITests: XCTestCase {
    func testAMemberGets403OnEveryAdminRoute() async throws {
        let team = try startTeam()
        let adaID = try XCTUnwrap(try team.parley.app.store.user(username: Team.admin.username)?.id)
        try team.addMember("bob")
        let bob = try await team.signIn("bob", "member password")
        let routes: [(String, String, Any?)] = [
            ("GET", "/api/users", nil),
            ("POST", "/api/users", ["username": "eve", "password": "eve password"]),
            ("PATCH", "/api/users/\(adaID)", ["role": "member"]),
            ("PATCH", "/api/users/nope", ["role": "member"]),
            ("GET", "/api/users/\(adaID)/usage", nil),
            ("GET", "/api/users/nope/usage", nil),
        ]
        for (method, path, body) in routes {
            let reply = try await team.call(method, path, cookie: bob, json: body)
            XCTAssertEqual(reply.status, 403, "\(method) \(path): \(reply.text)")
            XCTAssertEqual(reply.errorCode, "forbidden")
        }
        XCTAssertNil(try team.parley.app.store.user(username: "eve"))
        XCTAssertEqual(try team.parley.app.store.user(id: adaID)?.role, .admin)
    }

    /// A leaked admin token reads accounts and usage (scripts do), but creates and changes nothing:
    /// every kind of change is 403 `session_required` and leaves the account as it was. Otherwise the
    /// token could make itself an admin account, or reset the real admin's password and lock them out.
    func testAnAdminTokenReadsAccountsButCannotCreateOrChangeThem() async throws {
        let team = try startTeam()
        let store = team.parley.app.store
        let adaID = try XCTUnwrap(try store.user(username: Team.admin.username)?.id)
        let bobID = try team.addMember("bob")
        let carolID = try team.addMember("carol")
        _ = try store.updateUser(id: carolID, disabled: true)
        let token = try Team.bearer(team.parley, Team.admin.username)
        let ada = try await team.signIn()

        for path in ["/api/users", "/api/users/\(adaID)/usage", "/api/users/\(bobID)/usage", "/api/usage"] {
            let read = try await team.parley.call("GET", path, as: token)
            XCTAssertEqual(read.status, 200, "\(path): \(read.text)")
        }
        let changes: [(String, String, [String: Any])] = [
            ("POST", "/api/users", ["username": "mallory", "password": "mallory's password", "role": "admin"]),
            ("POST", "/api/users", ["username": "mallory", "password": "mallory's password"]),
            ("PATCH", "/api/users/\(adaID)", ["password": "attacker's choice"]),
            ("PATCH", "/api/users/\(bobID)", ["password": "attacker's choice"]),
            ("PATCH", "/api/users/\(bobID)", ["role": "admin"]),
            ("PATCH", "/api/users/\(adaID)", ["role": "member"]),
            ("PATCH", "/api/users/\(bobID)", ["disabled": true]),
            ("PATCH", "/api/users/\(carolID)", ["disabled": false]),
            ("PATCH", "/api/users/\(bobID)", ["display_name": "Not Bob"]),
            ("PATCH", "/api/users/\(bobID)", [:]),
            ("PATCH", "/api/users/nope", ["role": "admin"]),
        ]
        for (method, path, body) in changes {
            let reply = try await team.parley.call(method, path, as: token, json: body)
            XCTAssertEqual(reply.status, 403, "\(method) \(path) \(body): \(reply.text)")
            XCTAssertEqual(reply.errorCode, "session_required", "\(method) \(path) \(body)")
        }
        XCTAssertNil(try store.user(username: "mallory"), "no account was made")
        let bob = try XCTUnwrap(try store.user(id: bobID))
        XCTAssertEqual([bob.role, try store.user(id: adaID)?.role], [.member, .admin])
        XCTAssertEqual(bob.displayName, "bob")
        XCTAssertFalse(bob.disabled)
        XCTAssertEqual(try store.user(id: carolID)?.disabled, true)
        let adaStillSignsIn = try await team.canSignIn(Team.admin.username, Team.admin.password)
        let bobStillSignsIn = try await team.canSignIn("bob", "member password")
        XCTAssertTrue(adaStillSignsIn && bobStillSignsIn, "both passwords still work")
        let adaMe = try await team.me(ada)
        XCTAssertEqual(adaMe, 200, "the admin's session was not ended")
        let stillToken = try await team.parley.call("GET", "/api/users", as: token)
        XCTAssertEqual(stillToken.status, 200, "nor the token")

        // The same changes from the admin's session work (one of each kind).
        let made = try await team.call("POST", "/api/users", cookie: ada,
                                       json: ["username": "dan", "password": "dan's password"])
        XCTAssertEqual(made.status, 201, made.text)
        for body in [["display_name": "Bob B."], ["role": "admin"], ["disabled": true], ["disabled": false],
                     ["password": "bob's new password"]] as [[String: Any]] {
            let changed = try await team.call("PATCH", "/api/users/\(bobID)", cookie: ada, json: body)
            XCTAssertEqual(changed.status, 200, "\(body): \(changed.text)")
        }
    }

    func testAnAdminCreatesAUserWhoCanSignIn() async throws {
        let team = try startTeam()
        let ada = try await team.signIn()
        let created = try await team.call("POST", "/api/users", cookie: ada,
                                          json: ["username": "bob.smith@example", "password": "bob's password"])
        XCTAssertEqual(created.status, 201, created.text)
        XCTAssertEqual(Set(created.json.keys), ["id", "username", "display_name", "role", "disabled", "created_at"])
        XCTAssertEqual(created.json["role"] as? String, "member", "member unless said")
        XCTAssertEqual(created.json["display_name"] as? String, "bob.smith@example", "the username unless said")
        let canSignIn = try await team.canSignIn("bob.smith@example", "bob's password")
        XCTAssertTrue(canSignIn)

        let admin = try await team.call("POST", "/api/users", cookie: ada,
                                        json: ["username": "cy", "password": "cy's password", "role": "admin",
                                               "display_name": "Cy Young"])
        XCTAssertEqual(admin.status, 201, admin.text)
        XCTAssertEqual(admin.json["role"] as? String, "admin")
        XCTAssertEqual(admin.json["display_name"] as? String, "Cy Young")

        let list = try await team.call("GET", "/api/users", cookie: ada)
        XCTAssertEqual(list.status, 200)
        XCTAssertEqual(list.items.compactMap { $0["username"] as? String }, ["ada", "bob.smith@example", "cy"])
        XCTAssertFalse(list.text.contains("argon2"), "no password hash is ever shown")
        XCTAssertFalse(list.text.contains("password"))
    }

    func testAUsernameIsTakenInAnyCase() async throws {
        let team = try startTeam()
        let ada = try await team.signIn()
        let first = try await team.call("POST", "/api/users", cookie: ada, json: ["username": "bob", "password": "12345678"])
        XCTAssertEqual(first.status, 201)
        for name in ["bob", "BOB", "Ada"] {
            let taken = try await team.call("POST", "/api/users", cookie: ada, json: ["username": name, "password": "12345678"])
            XCTAssertEqual(taken.status, 409, "\(name): \(taken.text)")
            XCTAssertEqual(taken.errorCode, "conflict")
        }
    }

    func testCreateAndChangeRefuseBadFieldsNamingThem() async throws {
        let team = try startTeam()
        let ada = try await team.signIn()
        let good: [String: Any] = ["username": "bob", "password": "bob password"]
        let cases: [([String: Any], String)] = [
            (["password": "bob password"], "'username'"),
            (good.merging(["username": ""]) { $1 }, "'username'"),
            (good.merging(["username": "bob smith"]) { $1 }, "'username'"),
            (good.merging(["username": "bøb"]) { $1 }, "'username'"),
            (good.merging(["username": String(repeating: "b", count: 65)]) { $1 }, "'username'"),
            (["username": "bob"], "'password'"),
            (good.merging(["password": "1234567"]) { $1 }, "'password'"),
            (good.merging(["role": "root"]) { $1 }, "'role'"),
            (good.merging(["display_name": "   "]) { $1 }, "'display_name'"),
            (good.merging(["display_name": String(repeating: "d", count: 101)]) { $1 }, "'display_name'"),
        ]
        for (body, field) in cases {
            let reply = try await team.call("POST", "/api/users", cookie: ada, json: body)
            XCTAssertEqual(reply.status, 400, "\(body): \(reply.text)")
            XCTAssertEqual(reply.errorCode, "invalid_request")
            XCTAssertTrue(reply.errorMessage.contains(field), "\(body): \(reply.errorMessage)")
        }
        XCTAssertEqual(try team.parley.app.store.users().count, 1, "nothing refused was stored")
        let longest = try await team.call("POST", "/api/users", cookie: ada,
                                          json: ["username": String(repeating: "b", count: 64), "password": "12345678"])
        XCTAssertEqual(longest.status, 201, longest.text)

        let bobID = try team.addMember("bob")
        let changes: [([String: Any], String)] = [
            (["disabled": "yes"], "'disabled'"), (["disabled": 1], "'disabled'"), (["role": "owner"], "'role'"), (["password": "short"], "'password'"),
            (["display_name": ""], "'display_name'"),
        ]
        for (body, field) in changes {
            let reply = try await team.call("PATCH", "/api/users/\(bobID)", cookie: ada, json: body)
            XCTAssertEqual(reply.status, 400, "\(body): \(reply.text)")
            XCTAssertTrue(reply.errorMessage.contains(field), "\(body): \(reply.errorMessage)")
        }
        let unknown = try await team.call("PATCH", "/api/users/nope", cookie: ada, json: ["role": "member"])
        XCTAssertEqual(unknown.status, 404)
        let unknownUsage = try await team.call("GET", "/api/users/nope/usage", cookie: ada)
        XCTAssertEqual(unknownUsage.status, 404)
    }

    func testTheLastAdminCannotBeDemotedOrDisabled() async throws {
        let team = try startTeam()
        let ada = try await team.signIn()
        let adaID = try XCTUnwrap(try team.parley.app.store.user(username: Team.admin.username)?.id)
        for change in [["role": "member"], ["disabled": true]] as [[String: Any]] {
            let refused = try await team.call("PATCH", "/api/users/\(adaID)", cookie: ada, json: change)
            XCTAssertEqual(refused.status, 409, "\(change): \(refused.text)")
            XCTAssertEqual(refused.errorCode, "conflict")
        }
        let stillAdmin = try await team.call("GET", "/api/users", cookie: ada)
        XCTAssertEqual(stillAdmin.status, 200, "still an admin, still signed in")

        let cy = try await team.call("POST", "/api/users", cookie: ada,
                                     json: ["username": "cy", "password": "cy password", "role": "admin"])
        let cyID = try XCTUnwrap(cy.json["id"] as? String)
        let demoted = try await team.call("PATCH", "/api/users/\(adaID)", cookie: ada, json: ["role": "member"])
        XCTAssertEqual(demoted.status, 200, "another admin exists: \(demoted.text)")
        XCTAssertEqual(demoted.json["role"] as? String, "member")
        let nowMember = try await team.call("GET", "/api/users", cookie: ada)
        XCTAssertEqual(nowMember.status, 403, "the new role holds at the next request")
        let cyCookie = try await team.signIn("cy", "cy password")
        let last = try await team.call("PATCH", "/api/users/\(cyID)", cookie: cyCookie, json: ["disabled": true])
        XCTAssertEqual(last.status, 409, "cy is now the last admin")
    }

    func testDisablingAUserEndsTheirSessionTokenAndLiveReply() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(UpstreamStreams.stalling(after: ["the start of a long answer "]))
        let team = try startTeam(upstream: upstream)
        let bobID = try team.addMember("bob")
        let ada = try await team.signIn()
        let bob = try await team.signIn("bob", "member password")
        let token = try required(await team.call("POST", "/api/tokens", cookie: bob, json: ["name": "t"])
            .json["token"] as? String)
        let conversation = try required(await team.call("POST", "/api/conversations", cookie: bob,
                                                            json: ["model": "openai:fake"]).json["id"] as? String)
        let sent = try await team.call("POST", "/api/conversations/\(conversation)/messages", cookie: bob,
                                       json: ["content": "tell me everything"])
        XCTAssertEqual(sent.status, 201, sent.text)
        let reply = try XCTUnwrap((sent.json["assistant_message"] as? [String: Any])?["id"] as? String)
        // Live: the upstream has answered its first words and now holds the stream open.
        let app = team.parley.app
        let started = try await Deadline(.seconds(20)).wait {
            await app.generations.flush()
            return try !(app.store.message(id: reply)?.content.isEmpty ?? true)
        }
        XCTAssertTrue(started, "the reply never started")

        let disabled = try await team.call("PATCH", "/api/users/\(bobID)", cookie: ada, json: ["disabled": true])
        XCTAssertEqual(disabled.status, 200, disabled.text)
        XCTAssertEqual(disabled.json["disabled"] as? Bool, true)
        let sessionStatus = try await team.me(bob)
        XCTAssertEqual(sessionStatus, 401, "the session ended at once")
        let byToken = try await team.call("GET", "/api/conversations", token: token)
        XCTAssertEqual(byToken.status, 401, "the token ended at once")
        let aborted = await upstream.waitForDisconnect(timeout: .seconds(10))
        XCTAssertNotNil(aborted, "the upstream call was aborted")
        let stored = try XCTUnwrap(try team.parley.app.store.message(id: reply))
        XCTAssertEqual(stored.status, .stopped)
        XCTAssertEqual(stored.content, "the start of a long answer ", "the text streamed so far is kept")
        XCTAssertEqual(try team.parley.app.store.tokens(userID: bobID).count, 0)
        XCTAssertEqual(try team.parley.app.store.sessions(userID: bobID).count, 0)
        let signIn = try await team.canSignIn("bob", "member password")
        XCTAssertFalse(signIn, "a disabled user cannot sign in")

        let enabled = try await team.call("PATCH", "/api/users/\(bobID)", cookie: ada, json: ["disabled": false])
        XCTAssertEqual(enabled.json["disabled"] as? Bool, false)
        let signInAgain = try await team.canSignIn("bob", "member password")
        XCTAssertTrue(signInAgain, "enabled again, the password still works")
    }

    func testNoReplyStartsForAnAccountDisabledMeanwhile() async throws {
        // A request authenticated just before the disable reaches `send` after it: the reply is refused
        // where it would start, so none outlives the disable's `stopAll`.
        let team = try startTeam()
        let bobID = try team.addMember("bob")
        let bob = try await team.signIn("bob", "member password")
        let conversation = try required(await team.call("POST", "/api/conversations", cookie: bob).json["id"] as? String)
        _ = try team.parley.app.store.updateUser(id: bobID, disabled: true)
        do {
            _ = try await team.parley.app.generations.send(conversationID: conversation, placement: .afterCurrentLeaf,
                                                           content: "late", model: nil, owner: bobID)
            XCTFail("a disabled account's reply started")
        } catch {
            XCTAssertEqual("\(error)", "ownerDisabled")
        }
        let live = await team.parley.app.generations.liveCount
        XCTAssertEqual(live, 0)
        XCTAssertEqual(try team.parley.app.store.currentBranch(conversationID: conversation).count, 0,
                       "nothing was stored either")
    }

    func testAnAdminsNewPasswordForAUserEndsTheirSessions() async throws {
        let team = try startTeam()
        let bobID = try team.addMember("bob")
        let ada = try await team.signIn()
        let bob = try await team.signIn("bob", "member password")
        let reset = try await team.call("PATCH", "/api/users/\(bobID)", cookie: ada,
                                        json: ["password": "a fresh password", "display_name": "Bob"])
        XCTAssertEqual(reset.status, 200, reset.text)
        XCTAssertEqual(reset.json["display_name"] as? String, "Bob")
        let bobStatus = try await team.me(bob)
        let adaStatus = try await team.me(ada)
        XCTAssertEqual(bobStatus, 401)
        XCTAssertEqual(adaStatus, 200)
        let oldWorks = try await team.canSignIn("bob", "member password")
        let newWorks = try await team.canSignIn("bob", "a fresh password")
        XCTAssertFalse(oldWorks)
        XCTAssertTrue(newWorks)
    }

    func testUsageIsCountsWithoutContent() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(UpstreamStreams.complete(["first ", "answer"]), UpstreamStreams.complete(["second"]))
        let team = try startTeam(upstream: upstream)
        let bobID = try team.addMember("bob")
        let ada = try await team.signIn()
        let bob = try await team.signIn("bob", "member password")
        let empty = try await team.call("GET", "/api/users/\(bobID)/usage", cookie: ada)
        XCTAssertEqual(empty.status, 200, empty.text)
        XCTAssertEqual(empty.json["conversations"] as? Int, 0)
        XCTAssertTrue(empty.json["last_activity_at"] is NSNull)

        let conversation = try required(await team.call("POST", "/api/conversations", cookie: bob,
                                                            json: ["title": "bob's secret plans", "model": "openai:fake"])
            .json["id"] as? String)
        for content in ["private question one", "private question two"] {
            let sent = try await team.call("POST", "/api/conversations/\(conversation)/messages", cookie: bob,
                                           json: ["content": content])
            let reply = try XCTUnwrap((sent.json["assistant_message"] as? [String: Any])?["id"] as? String)
            _ = try await team.parley.finished(reply, headers: [("Cookie", bob)])
        }
        _ = try await team.call("POST", "/api/conversations", cookie: ada, json: ["title": "ada's own"])

        let usage = try await team.call("GET", "/api/users/\(bobID)/usage", cookie: ada)
        XCTAssertEqual(usage.status, 200, usage.text)
        XCTAssertEqual(Set(usage.json.keys), ["user_id", "conversations", "messages", "assistant_replies",
                                               "output_tokens", "last_activity_at", "tokens"])
        XCTAssertEqual(usage.json["user_id"] as? String, bobID)
        XCTAssertEqual(usage.json["conversations"] as? Int, 1)
        XCTAssertEqual(usage.json["messages"] as? Int, 4)
        XCTAssertEqual(usage.json["assistant_replies"] as? Int, 2)
        XCTAssertEqual(usage.json["output_tokens"] as? Int, 6, "3 reported per reply by the fake upstream")
        XCTAssertNotNil(usage.json["last_activity_at"] as? String)
        for word in ["secret", "plans", "private", "question", "answer", "second"] {
            XCTAssertFalse(usage.text.contains(word), "usage shows no title or content: \(usage.text)")
        }
    }
}
