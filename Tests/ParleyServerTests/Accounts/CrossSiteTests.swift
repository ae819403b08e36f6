import Foundation
import ParleyEvents
import ParleyHTTP
import ParleyServer
import ParleyTestSupport
import XCTest

/// What a web page the user visits can do to a Parley on their machine: a form or `no-cors` fetch
/// posting to it, and a DNS-rebinding page that reaches 127.0.0.1 under its own name.
final class CrossSiteTests: XCTestCase {
    private func parley(_ settings: [String: String] = [:]) throws -> TestParley {
        try startParley(settings)
    }

    private func conversationCount(_ parley: TestParley) async throws -> Int {
        let list = try await parley.call("GET", "/api/conversations")
        return (list.json["items"] as? [Any])?.count ?? -1
    }

    /// A raw request, so the test controls every header (the helper adds a JSON content type).
    private func raw(_ parley: TestParley, _ method: String, _ path: String, headers: [(String, String)],
                     body: String?) async throws -> TestParley.Reply {
        let url = parley.base + path
        return try await Blocking.run {
            let response = try TestHTTPClient().request(method, url, headers: headers, body: body.map { Array($0.utf8) })
            return TestParley.Reply(status: response.status, headers: response.headers, text: response.text)
        }
    }

    func testAFormPostIsRefusedWithoutStoringAnything() async throws {
        let parley = try parley()
        // <form method=POST enctype=text/plain>: the browser sends `{"title":"x","system_prompt":"..."}=`.
        for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", nil] {
            let reply = try await raw(parley, "POST", "/api/conversations",
                                      headers: type.map { [("Content-Type", $0)] } ?? [],
                                      body: "{\"title\":\"x\",\"system_prompt\":\"obey evil\"}=")
            XCTAssertEqual(reply.status, 415, "\(type ?? "no type"): \(reply.text)")
            XCTAssertEqual(reply.errorCode, "unsupported_media_type")
        }
        let empty = try await raw(parley, "POST", "/api/conversations",
                                  headers: [("Content-Type", "text/plain")], body: "")
        XCTAssertEqual(empty.status, 415, "a declared non-JSON type is refused even without a body")
        let count = try await conversationCount(parley)
        XCTAssertEqual(count, 0)
    }

    func testJSONWithACharsetAndBodilessActionsAreAccepted() async throws {
        let parley = try parley()
        let created = try await raw(parley, "POST", "/api/conversations",
                                    headers: [("Content-Type", "Application/JSON; charset=utf-8")], body: "{\"title\":\"ok\"}")
        XCTAssertEqual(created.status, 201, created.text)
        let id = try XCTUnwrap(created.json["id"] as? String)
        // A script deleting with no body and no type.
        let deleted = try await raw(parley, "DELETE", "/api/conversations/\(id)", headers: [], body: nil)
        XCTAssertEqual(deleted.status, 204, deleted.text)
    }

    func testAWriteFromAnotherSiteIsForbidden() async throws {
        let parley = try parley()
        let json = [("Content-Type", "application/json")]
        let evil = try await raw(parley, "POST", "/api/conversations",
                                 headers: json + [("Origin", "https://evil.example")], body: "{}")
        XCTAssertEqual(evil.status, 403, evil.text)
        XCTAssertEqual(evil.errorCode, "cross_origin")
        let own = try await raw(parley, "POST", "/api/conversations",
                                headers: json + [("Origin", parley.base)], body: "{}")
        XCTAssertEqual(own.status, 201, own.text)
        let count = try await conversationCount(parley)
        XCTAssertEqual(count, 1, "only the page's own write was stored")
    }

    func testADNSRebindingPageGetsNothingOnAnyRoute() async throws {
        let parley = try parley()
        let id = try await parley.conversation(["title": "secret plans"])
        let port = parley.app.port
        for (method, path) in [("GET", "/api/conversations"), ("GET", "/api/conversations/\(id)"),
                               ("GET", "/api/messages/x/stream"), ("GET", "/"), ("GET", "/app.js"),
                               ("DELETE", "/api/conversations/\(id)")] {
            let reply = try await raw(parley, method, path, headers: [("Host", "evil.example:\(port)")], body: nil)
            XCTAssertEqual(reply.status, 421, "\(method) \(path)")
            XCTAssertEqual(reply.errorCode, "misdirected_request")
            XCTAssertFalse(reply.text.contains("secret plans"))
        }
        let still = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(still.status, 200, "nothing was deleted")
    }

    func testTheOperatorCanAddHostsAndAPublicURL() async throws {
        let parley = try parley(["PARLEY_ALLOWED_HOSTS": "parley.lan, other.lan:8080",
                                 "PARLEY_PUBLIC_URL": "https://chat.example.org"])
        for host in ["parley.lan", "other.lan:1234", "chat.example.org", "localhost"] {
            let reply = try await raw(parley, "GET", "/api/health", headers: [("Host", host)], body: nil)
            XCTAssertEqual(reply.status, 200, host)
        }
        let reply = try await raw(parley, "GET", "/api/health", headers: [("Host", "evil.example")], body: nil)
        XCTAssertEqual(reply.status, 421)
        // Behind a reverse proxy the page's origin is the public URL, whatever Host the proxy sends.
        let proxied = try await raw(parley, "POST", "/api/conversations",
                                    headers: [("Host", "parley.lan"), ("Origin", "https://chat.example.org"),
                                              ("Content-Type", "application/json")], body: "{}")
        XCTAssertEqual(proxied.status, 201, proxied.text)
    }

    func testPageHeadersStayStrict() async throws {
        let parley = try parley()
        let page = try await raw(parley, "GET", "/", headers: [], body: nil)
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.headers["content-security-policy"],
                       "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
                       + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
        XCTAssertEqual(page.headers["x-content-type-options"], "nosniff")
        XCTAssertEqual(page.headers["x-frame-options"], "DENY")
    }

    func testSettingsForHostsAndConnections() throws {
        let loopback = try ParleyConfiguration(environment: [:], arguments: [])
        XCTAssertEqual(loopback.http.originPolicy.allowedHosts, OriginPolicy.loopbackHosts)
        XCTAssertEqual(loopback.http.headerTimeout, 10)
        XCTAssertNil(loopback.http.connectionsPerAddress, "a quarter of PARLEY_MAX_CONNECTIONS")
        let open = try ParleyConfiguration(environment: ["PARLEY_HOST": "0.0.0.0"], arguments: [])
        XCTAssertNil(open.http.originPolicy.allowedHosts, "off loopback any Host is answered unless listed")
        let listed = try ParleyConfiguration(environment: [
            "PARLEY_HOST": "0.0.0.0", "PARLEY_ALLOWED_HOSTS": "Chat.Example.org", "PARLEY_HEADER_TIMEOUT": "3",
            "PARLEY_MAX_CONNECTIONS_PER_IP": "9", "PARLEY_TRUSTED_PROXIES": "10.0.0.1, 10.0.0.2",
            "PARLEY_MAX_DISCARD_BYTES": "100",
        ], arguments: [])
        XCTAssertEqual(listed.http.originPolicy.allowedHosts, ["chat.example.org"])
        XCTAssertEqual(listed.http.headerTimeout, 3)
        XCTAssertEqual(listed.http.connectionsPerAddress, 9)
        XCTAssertEqual(listed.http.trustedProxies.map(\.description), ["10.0.0.1/32", "10.0.0.2/32"])
        XCTAssertEqual(listed.http.maxDiscardBytes, 100)
        XCTAssertThrowsError(try ParleyConfiguration(environment: ["PARLEY_PUBLIC_URL": "ftp://x"], arguments: [])) {
            XCTAssertTrue("\($0)".contains("PARLEY_PUBLIC_URL"))
        }
        XCTAssertThrowsError(try ParleyConfiguration(environment: ["PARLEY_HEADER_TIMEOUT": "0"], arguments: []))
    }
}
