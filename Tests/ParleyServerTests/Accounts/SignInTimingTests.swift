import Foundation
import ParleyAuth
import ParleyTestSupport
import XCTest

/// A failed sign-in must not tell whether the name is an account, also after a change of
/// `PARLEY_PASSWORD_MEMORY_KIB`: a hash keeps its old cost until its owner signs in again, so an
/// old account's wrong password took ten times as long as an unknown name (whose decoy is at the
/// new cost). Every failure now waits as long as a check at the slowest cost still stored.
final class SignInTimingTests: XCTestCase {
    /// Ten times apart, as small as keeps the test quick (libsodium's floor is 8 KiB).
    static let oldMemoryKiB = 16_384
    static let newMemoryKiB = 1_638
    static let rounds = 11

    func testAWrongPasswordAtAnOldCostTakesAsLongAsAnUnknownName() async throws {
        let before = try startParley(Team.settings.merging(["PARLEY_PASSWORD_MEMORY_KIB": String(Self.oldMemoryKiB)]) { $1 })
        let team = Team(parley: before)
        let ada = try await team.signIn()
        let created = try await team.call("POST", "/api/users", cookie: ada,
                                          json: ["username": "bob", "password": "bob's password"])
        XCTAssertEqual(created.status, 201, created.text)
        let carol = try await team.call("POST", "/api/users", cookie: ada,
                                        json: ["username": "carol", "password": "carol's password"])
        let carolID = try XCTUnwrap(carol.json["id"] as? String)
        let disabledCarol = try await team.call("PATCH", "/api/users/\(carolID)", cookie: ada, json: ["disabled": true])
        XCTAssertEqual(disabledCarol.status, 200, disabledCarol.text)
        await before.stop()

        let parley = try startParley(Team.settings.merging([
            "PARLEY_PASSWORD_MEMORY_KIB": String(Self.newMemoryKiB), "PARLEY_LOGIN_ATTEMPTS": "1000",
        ]) { $1 }, directory: before.directory)
        let bob = try XCTUnwrap(try parley.app.store.user(username: "bob")?.passwordHash)
        XCTAssertEqual(PasswordCost(hash: bob)?.memoryKiB, Self.oldMemoryKiB, "kept until bob signs in")

        func failedSignIn(_ username: String) async throws -> Double {
            let started = ContinuousClock.now
            let reply = try await parley.call("POST", "/api/auth/login",
                                              json: ["username": username, "password": "not the password"])
            XCTAssertEqual(reply.status, 401, reply.text)
            return (ContinuousClock.now - started) / .seconds(1)
        }
        // Interleaved, so whatever else the machine runs slows both alike.
        var wrongPassword: [Double] = []
        var unknown: [Double] = []
        var disabled: [Double] = []
        for _ in 0..<Self.rounds {
            wrongPassword.append(try await failedSignIn("bob"))
            unknown.append(try await failedSignIn("nobody-here"))
            disabled.append(try await failedSignIn("carol"))
        }
        let median = { (times: [Double]) in times.sorted()[times.count / 2] }
        let figures = String(format: "wrong password %.1f ms, unknown name %.1f ms, disabled name %.1f ms",
                             median(wrongPassword) * 1000, median(unknown) * 1000, median(disabled) * 1000)
        for other in [unknown, disabled] {
            let ratio = median(wrongPassword) / median(other)
            XCTAssertLessThanOrEqual(ratio, 1.5, figures)
            XCTAssertLessThanOrEqual(1 / ratio, 1.5, figures)
        }

        // Once every account has signed in, its hash is at today's cost: failures are no longer
        // padded to the old one (they still cost a check, the decoy's).
        for (username, password) in [("bob", "bob's password"), Team.admin] {
            let reply = try await parley.call("POST", "/api/auth/login", json: ["username": username, "password": password])
            XCTAssertEqual(reply.status, 200, reply.text)
            let rehashed = try XCTUnwrap(try parley.app.store.user(username: username)?.passwordHash)
            XCTAssertEqual(PasswordCost(hash: rehashed)?.memoryKiB, Self.newMemoryKiB, username)
        }
        var afterwards: [Double] = []
        for _ in 0..<Self.rounds { afterwards.append(try await failedSignIn("nobody-here")) }
        // Measured after the interleaved rounds, so a loaded machine can slow it alone: the bound leaves
        // room for that (still padded to the old cost, it would be about 1×; unloaded it is under 0.3×).
        XCTAssertLessThan(median(afterwards), median(unknown) * 0.75,
                          String(format: "%.1f ms once the old cost is gone; ", median(afterwards) * 1000) + figures)
    }
}
