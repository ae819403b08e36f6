import Foundation
import ParleyTestSupport
import XCTest

/// The audit lines of account changes, read from the real `parley` process's standard error:
/// one structured line per event, and never a password, a hash or a secret in any of them.
final class AuditTests: XCTestCase {
    func testAccountEventsAreAuditedWithoutSecrets() async throws {
        let directory = TestFiles.directory("audit")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let process = try startProcess(environment: Team.settings.merging([
            "PARLEY_PORT": "0", "PARLEY_DB": directory.appendingPathComponent("parley.db").path,
            "PARLEY_PUBLIC": TestParley.repositoryRoot.appendingPathComponent("Public").path,
        ]) { $1 })
        let base = process.base
        @Sendable func call(_ method: String, _ path: String, _ json: [String: Any]? = nil,
                            headers: [(String, String)] = []) async throws -> TestHTTPClient.Response {
            let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) }
            return try await Blocking.run {
                try TestHTTPClient().request(method, base + path, headers: headers + [("Content-Type", "application/json")],
                                             body: body)
            }
        }
        func object(_ response: TestHTTPClient.Response) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        }

        let signIn = try await call("POST", "/api/auth/login", ["username": Team.admin.username,
                                                                "password": Team.admin.password])
        let setCookie = try XCTUnwrap(signIn.header("Set-Cookie"))
        let cookie = [("Cookie", String(setCookie.split(separator: ";")[0]))]
        let sessionSecret = String(setCookie.split(separator: ";")[0].dropFirst("parley_session=".count))
        let other = try await call("POST", "/api/auth/login", ["username": Team.admin.username,
                                                               "password": Team.admin.password])
        XCTAssertEqual(other.status, 200)

        let token = object(try await call("POST", "/api/tokens", ["name": "nightly backup"], headers: cookie))
        let tokenSecret = try XCTUnwrap(token["token"] as? String)
        let tokenID = try XCTUnwrap(token["id"] as? String)
        _ = try await call("DELETE", "/api/tokens/\(tokenID)", headers: cookie)

        let bob = object(try await call("POST", "/api/users", ["username": "bob", "password": "bob's first password"],
                                        headers: cookie))
        let bobID = try XCTUnwrap(bob["id"] as? String)
        _ = try await call("PATCH", "/api/users/\(bobID)", ["role": "admin", "password": "bob's second password"],
                           headers: cookie)
        _ = try await call("PATCH", "/api/users/\(bobID)", ["disabled": true], headers: cookie)
        _ = try await call("PATCH", "/api/users/\(bobID)", ["disabled": false], headers: cookie)

        let sessions = object(try await call("GET", "/api/auth/sessions", headers: cookie))["items"] as? [[String: Any]]
        let otherSession = try XCTUnwrap(sessions?.first { $0["current"] as? Bool == false }?["id"] as? String)
        _ = try await call("DELETE", "/api/auth/sessions/\(otherSession)", headers: cookie)
        _ = try await call("POST", "/api/auth/password", ["current": "a wrong guess", "new": "ada's new password"],
                           headers: cookie)
        let changed = try await call("POST", "/api/auth/password",
                                     ["current": Team.admin.password, "new": "ada's new password"], headers: cookie)
        XCTAssertEqual(changed.status, 204)

        let lines = try await waitForAudit(process, "password_changed")
        let events = lines.compactMap { $0["audit"] }
        for event in ["sign_in", "token_created", "token_revoked", "user_created", "user_changed", "user_disabled",
                      "user_enabled", "session_revoked", "password_change_failed", "password_changed"] {
            XCTAssertTrue(events.contains(event), "\(event) in \(events)")
        }
        XCTAssertTrue(lines.contains { $0["audit"] == "user_changed" && $0["fields"] == "role=admin,password" },
                      "which fields changed, not their values")
        XCTAssertTrue(lines.contains { $0["audit"] == "token_created" && $0["token_id"] == tokenID
                          && $0["name"] == "nightly backup" })
        let log = process.errors
        for secret in [Team.admin.password, "ada's new password", "a wrong guess", "bob's first password",
                       "bob's second password", tokenSecret, String(tokenSecret.dropFirst(3)), sessionSecret, "$argon2"] {
            XCTAssertFalse(log.contains(secret), "the log shows \(secret.debugDescription)")
        }
    }

    /// The audit lines so far, once `event` is among them (the process writes them as it goes).
    private func waitForAudit(_ process: ParleyProcess, _ event: String) async throws -> [[String: String]] {
        var lines: [[String: String]] = []
        let found = await Deadline(.seconds(10)).wait {
            lines = process.errors.split(separator: "\n").compactMap { line in
                guard line.hasPrefix("{\"audit\"") else { return nil }
                return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: String]
            }
            return lines.contains { $0["audit"] == event }
        }
        XCTAssertTrue(found, "no \(event) audit line in: \(process.errors)")
        return lines
    }
}
