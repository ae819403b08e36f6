import Foundation
import ParleyTestSupport
import XCTest

/// Single sign-on through a reverse proxy (PARLEY_AUTH_HEADER): the header signs a request in only
/// when it comes from PARLEY_TRUSTED_PROXIES. 127.0.0.2 plays the proxy (or a stranger) by binding
/// the client socket to it.
final class ProxySignInTests: XCTestCase {
    private struct Answer {
        let status: Int
        let body: String
        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
        }
    }

    /// One request from `address` on a raw connection (the HTTP client cannot pick its source address).
    private func request(_ parley: TestParley, _ path: String, method: String = "GET", from address: String,
                         headers: [(String, String)]) throws -> Answer {
        let connection = try RawConnection(port: parley.app.port, from: address)
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if method != "GET" { text += "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}" } else { text += "\r\n" }
        connection.send(text)
        let received = connection.readUntilClosed(timeout: 10).text
        let statusLine = received.split(separator: "\r\n").first ?? ""
        let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") ?? 0
        let body = received.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        return Answer(status: status, body: body)
    }

    private func proxied(trusting proxies: String) throws -> TestParley {
        try startTeamParley(["PARLEY_AUTH_HEADER": "Remote-User", "PARLEY_TRUSTED_PROXIES": proxies])
    }

    func testATrustedProxySignsInAndCreatesAMemberOnFirstSight() throws {
        let parley = try proxied(trusting: "127.0.0.2")
        XCTAssertNil(try parley.app.store.user(username: "bob"))
        let me = try request(parley, "/api/auth/me", from: "127.0.0.2", headers: [("Remote-User", "bob")])
        XCTAssertEqual(me.status, 200, me.body)
        let user = try XCTUnwrap(me.json["user"] as? [String: Any])
        XCTAssertEqual(user["username"] as? String, "bob")
        XCTAssertEqual(user["role"] as? String, "member")
        let stored = try XCTUnwrap(try parley.app.store.user(username: "bob"))
        XCTAssertNil(stored.passwordHash, "a proxy user has no password")
        XCTAssertEqual(stored.role, .member)
        // The same user the next time, in any case; the API works as them.
        let again = try request(parley, "/api/conversations", method: "POST", from: "127.0.0.2", headers: [("Remote-User", "BOB")])
        XCTAssertEqual(again.status, 201, again.body)
        XCTAssertEqual(try parley.app.store.users().filter { $0.username.lowercased() == "bob" }.count, 1)
        let list = try request(parley, "/api/conversations", from: "127.0.0.2", headers: [("Remote-User", "bob")])
        XCTAssertEqual((list.json["items"] as? [Any])?.count, 1)
        // An existing account (the admin) is signed in as itself.
        let admin = try request(parley, "/api/auth/me", from: "127.0.0.2", headers: [("Remote-User", Team.admin.username)])
        XCTAssertEqual((admin.json["user"] as? [String: Any])?["role"] as? String, "admin")
    }

    func testASpoofedHeaderFromAnUntrustedAddressIsIgnored() throws {
        let parley = try proxied(trusting: "127.0.0.3")
        for path in ["/api/auth/me", "/api/conversations"] {
            let spoofed = try request(parley, path, from: "127.0.0.2", headers: [("Remote-User", Team.admin.username)])
            XCTAssertEqual(spoofed.status, 401, "\(path): \(spoofed.body)")
            XCTAssertEqual((spoofed.json["error"] as? [String: Any])?["code"] as? String, "unauthenticated")
        }
        let newcomer = try request(parley, "/api/auth/me", from: "127.0.0.2", headers: [("Remote-User", "mallory")])
        XCTAssertEqual(newcomer.status, 401)
        XCTAssertNil(try parley.app.store.user(username: "mallory"), "no account is made from a stranger's header")
    }

    func testARangeOfProxiesIsTrusted() throws {
        let parley = try proxied(trusting: "10.0.0.0/8, 127.0.0.0/30")
        let me = try request(parley, "/api/auth/me", from: "127.0.0.2", headers: [("Remote-User", "carol")])
        XCTAssertEqual(me.status, 200, me.body)
        let outside = try proxied(trusting: "127.0.0.4/30")
        let refused = try request(outside, "/api/auth/me", from: "127.0.0.2", headers: [("Remote-User", "carol")])
        XCTAssertEqual(refused.status, 401)
    }

    func testADisabledUserStaysRefusedThroughTheHeader() throws {
        let parley = try proxied(trusting: "127.0.0.2")
        let first = try request(parley, "/api/auth/me", from: "127.0.0.2", headers: [("Remote-User", "dave")])
        XCTAssertEqual(first.status, 200)
        let dave = try XCTUnwrap(try parley.app.store.user(username: "dave"))
        _ = try parley.app.store.updateUser(id: dave.id, disabled: true)
        let refused = try request(parley, "/api/auth/me", from: "127.0.0.2", headers: [("Remote-User", "dave")])
        XCTAssertEqual(refused.status, 401, refused.body)
    }

    func testAUsernameOutsideTheRuleIsRefused() throws {
        let parley = try proxied(trusting: "127.0.0.2")
        for name in ["bob smith", "<script>", "bob\u{7f}", String(repeating: "a", count: 255), "bö"] {
            let reply = try request(parley, "/api/auth/me", from: "127.0.0.2", headers: [("Remote-User", name)])
            XCTAssertEqual(reply.status, 401, name)
        }
        XCTAssertEqual(try parley.app.store.users().count, 1, "only the admin")
        let email = try request(parley, "/api/auth/me", from: "127.0.0.2",
                                headers: [("Remote-User", "erin.o'neil@example.org")])
        XCTAssertEqual(email.status, 401, "an apostrophe is outside the rule")
        let plain = try request(parley, "/api/auth/me", from: "127.0.0.2", headers: [("Remote-User", "erin+chat@example.org")])
        XCTAssertEqual(plain.status, 200, plain.body)
    }

    func testWithoutTheHeaderAProxiedRequestNeedsACredential() throws {
        let parley = try proxied(trusting: "127.0.0.2")
        let bare = try request(parley, "/api/auth/me", from: "127.0.0.2", headers: [])
        XCTAssertEqual(bare.status, 401)
        let bearer = try Team.bearer(parley, "frank")
        for headers in [[bearer], [bearer, ("Remote-User", "")]] {
            let withToken = try request(parley, "/api/auth/me", from: "127.0.0.2", headers: headers)
            XCTAssertEqual((withToken.json["user"] as? [String: Any])?["username"] as? String, "frank",
                           "an empty header is no header: \(withToken.body)")
        }
    }

    func testTheFirstSightIsAnAuditLine() async throws {
        let directory = TestFiles.directory("proxy-audit")
        let process = try startProcess(environment: [
            "PARLEY_PORT": "0", "PARLEY_DB": directory.appendingPathComponent("parley.db").path,
            "PARLEY_PUBLIC": TestParley.repositoryRoot.appendingPathComponent("Public").path,
        ].merging(Team.settings) { $1 }.merging(["PARLEY_AUTH_HEADER": "X-Forwarded-Email",
                                                 "PARLEY_TRUSTED_PROXIES": "127.0.0.2"]) { $1 })
        let port = try XCTUnwrap(Int(try XCTUnwrap(process.base.split(separator: ":").last)))
        for _ in 0..<2 {
            let connection = try RawConnection(port: port, from: "127.0.0.2")
            connection.send("GET /api/auth/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-Email: gina@example.org\r\n"
                            + "Connection: close\r\n\r\n")
            XCTAssertTrue(connection.readUntilClosed(timeout: 10).text.hasPrefix("HTTP/1.1 200"))
        }
        process.kill(SIGTERM)
        let lines = process.errors.split(separator: "\n").filter { $0.contains("\"audit\":\"user_created\"") }
        XCTAssertEqual(lines.count, 2, "the admin at start, gina once: \(process.errors)")
        XCTAssertTrue(lines.last?.contains("\"username\":\"gina@example.org\"") ?? false, "\(lines)")
        XCTAssertTrue(lines.last?.contains("\"by\":\"proxy header\"") ?? false, "\(lines)")
    }

    func testTheHeaderMeansNothingWithoutTheSetting() throws {
        let parley = try startTeamParley(["PARLEY_TRUSTED_PROXIES": "127.0.0.2"])
        let reply = try request(parley, "/api/auth/me", from: "127.0.0.2", headers: [("Remote-User", Team.admin.username)])
        XCTAssertEqual(reply.status, 401)
    }
}
