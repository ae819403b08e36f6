import Foundation
import ParleyAuth
import ParleyStore
import ParleyTestSupport
import Synchronization
import XCTest

/// Secrets stay out of logs and answers: a full team-mode flow against the real `parley` process,
/// with a known admin password, an API token, a session cookie and a provider key whose model server
/// answers 401 and echoes the key back. None of them may appear on stdout, stderr or in any response
/// body (the session secret is in the sign-in's `Set-Cookie`, which is its only place).
final class SecretsInLogsTests: XCTestCase {
    private let adminPassword = "admin-pw-Zq8!secret"
    private let providerKey = "sk-test-PROVIDERKEY-9f8e7d6c5b4a"
    /// A failed sign-in's guess: a password never shows in an audit line either.
    private let wrongPassword = "guess-pw-Qx7-secret"

    /// Every answer the test received: status, headers and body, for the final check.
    private final class Transcript: Sendable {
        private let answers = Mutex<[(String, TestHTTPClient.Response)]>([])
        func record(_ label: String, _ response: TestHTTPClient.Response) { answers.withLock { $0.append((label, response)) } }
        var all: [(String, TestHTTPClient.Response)] { answers.withLock { $0 } }
    }

    func testNoSecretAppearsInTheLogsOrInAnyAnswer() async throws {
        let upstream = try startUpstream { request in
            // A careless model server: its 401 repeats the credential it was sent.
            let sent = request.header("Authorization") ?? ""
            return .json("{\"error\":{\"message\":\"Incorrect API key provided: \(sent)\"}}", status: 401)
        }
        let directory = TestFiles.directory("secrets")
        let database = directory.appendingPathComponent("parley.db").path
        let process = try startProcess(environment: [
            "PARLEY_PORT": "0", "PARLEY_DB": database,
            "PARLEY_PUBLIC": TestParley.repositoryRoot.appendingPathComponent("Public").path,
            "PARLEY_AUTH": "on", "PARLEY_ADMIN_USER": "ada", "PARLEY_ADMIN_PASSWORD": adminPassword,
            "PARLEY_PASSWORD_MEMORY_KIB": "64",
            "PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1", "PARLEY_OPENAI_API_KEY": providerKey,
            "PARLEY_OPENAI_MODELS": "fake",
        ])
        let transcript = Transcript()
        let base = process.base
        func call(_ method: String, _ path: String, json: [String: Any]? = nil, headers: [(String, String)] = [])
            async throws -> TestHTTPClient.Response {
            let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) }
            let response = try await Blocking.run {
                try TestHTTPClient().request(method, base + path, headers: headers + [("Content-Type", "application/json")],
                                             body: body, timeout: 30)
            }
            transcript.record("\(method) \(path)", response)
            return response
        }
        func object(_ response: TestHTTPClient.Response) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        }

        // Signing in: once wrong, once right.
        let wrong = try await call("POST", "/api/auth/login", json: ["username": "ada", "password": wrongPassword])
        XCTAssertEqual(wrong.status, 401)
        let login = try await call("POST", "/api/auth/login", json: ["username": "ada", "password": adminPassword])
        XCTAssertEqual(login.status, 200, login.text)
        let setCookie = try XCTUnwrap(login.header("Set-Cookie"))
        let cookie = String(setCookie.split(separator: ";")[0])
        let sessionSecret = String(cookie.split(separator: "=", maxSplits: 1)[1])
        XCTAssertTrue(sessionSecret.hasPrefix("ps_"), setCookie)
        let session = [("Cookie", cookie)]

        // An API token, made in the store the process uses (WAL: a second connection is fine).
        let tokenSecret = SecretToken.generate(prefix: "pt_")
        let store = try Store(path: database)
        let admin = try XCTUnwrap(try store.user(username: "ada"))
        _ = try store.createToken(userID: admin.id, name: "script", digest: SecretToken.digest(tokenSecret))
        let bearer = [("Authorization", "Bearer \(tokenSecret)")]

        // The flow: models, a conversation, a reply the model server refuses, its stream, the lists.
        let me = try await call("GET", "/api/auth/me", headers: bearer)
        XCTAssertEqual(me.status, 200, me.text)
        _ = try await call("GET", "/api/models", headers: session)
        let created = try await call("POST", "/api/conversations", json: ["title": "t", "model": "openai:fake"],
                                     headers: session)
        let conversation = try XCTUnwrap(object(created)["id"] as? String, created.text)
        let sent = try await call("POST", "/api/conversations/\(conversation)/messages", json: ["content": "hello"],
                                  headers: bearer)
        XCTAssertEqual(sent.status, 201, sent.text)
        let assistant = try XCTUnwrap((object(sent)["assistant_message"] as? [String: Any])?["id"] as? String)
        let stream = try await Blocking.run {
            try TestHTTPClient().stream(base + "/api/messages/\(assistant)/stream?mode=text", headers: session,
                                        until: { String(decoding: $0, as: UTF8.self).contains("event: done") },
                                        timeout: 20)
        }
        transcript.record("stream", stream)
        XCTAssertTrue(stream.text.contains("upstream_unauthorized"), stream.text)
        let failed = try await call("GET", "/api/messages/\(assistant)", headers: session)
        XCTAssertEqual(object(failed)["status"] as? String, "failed", failed.text)
        let detail = (object(failed)["error"] as? [String: Any])?["message"] as? String ?? ""
        XCTAssertTrue(detail.contains("HTTP 401") && detail.contains("[redacted]"),
                      "the model server's echo is kept, with the key taken out: \(detail)")
        _ = try await call("GET", "/api/conversations/\(conversation)", headers: bearer)
        _ = try await call("GET", "/api/conversations", headers: session)
        _ = try await call("POST", "/api/messages/\(assistant)/regenerate", json: [:], headers: session)
        _ = try await call("POST", "/api/auth/logout", json: [:], headers: session)
        let afterLogout = try await call("GET", "/api/auth/me", headers: session)
        XCTAssertEqual(afterLogout.status, 401)
        process.kill(SIGTERM)

        // The key did reach the model server (so a leak would have had something to leak).
        XCTAssertTrue(upstream.requests.contains { $0.header("Authorization") == "Bearer \(providerKey)" })
        XCTAssertTrue(process.errors.contains("\"audit\":\"sign_in\""), "the audit log was written: \(process.errors)")

        let secrets = ["admin password": adminPassword, "wrong password": wrongPassword, "provider key": providerKey,
                       "API token": tokenSecret, "session cookie": sessionSecret]
        for (name, secret) in secrets {
            XCTAssertFalse(process.output.contains(secret), "\(name) on stdout")
            XCTAssertFalse(process.errors.contains(secret), "\(name) on stderr: \(process.errors)")
            for (label, response) in transcript.all {
                XCTAssertFalse(response.text.contains(secret), "\(name) in the answer to \(label): \(response.text)")
                for (header, value) in response.headers where value.contains(secret) {
                    XCTAssertTrue(label == "POST /api/auth/login" && header == "set-cookie" && name == "session cookie",
                                  "\(name) in the \(header) header of \(label)")
                }
            }
        }
    }
}
