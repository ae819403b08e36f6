import Foundation
@testable import ParleyHTTP
import ParleyTestSupport
import XCTest

/// DNS rebinding (a foreign `Host`) and cross-site writes (a foreign `Origin`), at the HTTP layer.
final class OriginPolicyTests: XCTestCase {
    private let loopback = OriginPolicy(allowedHosts: OriginPolicy.loopbackHosts,
                                        trustedOrigins: ["https://chat.example.org"])

    func testHostNamesAreComparedWithoutPortOrCase() {
        XCTAssertEqual(OriginPolicy.hostName("LocalHost:8080"), "localhost")
        XCTAssertEqual(OriginPolicy.hostName("[::1]:80"), "[::1]")
        XCTAssertEqual(OriginPolicy.hostName("127.0.0.1"), "127.0.0.1")
        XCTAssertEqual(OriginPolicy.hostName("example.org."), "example.org")
        XCTAssertNil(OriginPolicy.hostName("[::1"))
        XCTAssertNil(OriginPolicy.hostName("evil:x"))
        XCTAssertNil(OriginPolicy.hostName(""))
    }

    func testLoopbackNamesPassAndOthersAreMisdirected() {
        for host in ["localhost:8080", "127.0.0.1:8080", "[::1]:8080", "127.0.0.1"] {
            XCTAssertNil(loopback.problem(method: "GET", host: host, origin: nil), host)
        }
        for host in ["evil.example:8080", "127.0.0.2:8080", "localhost.evil.example", ""] {
            XCTAssertEqual(loopback.problem(method: "GET", host: host, origin: nil)?.status, 421, host)
        }
        XCTAssertEqual(loopback.problem(method: "GET", host: nil, origin: nil)?.code, "misdirected_request")
    }

    func testWritesFromAnotherOriginAreForbiddenButReadsAndScriptsPass() {
        let host = "127.0.0.1:8080"
        XCTAssertNil(loopback.problem(method: "POST", host: host, origin: "http://127.0.0.1:8080"))
        XCTAssertNil(loopback.problem(method: "POST", host: host, origin: nil), "curl and scripts send no Origin")
        XCTAssertNil(loopback.problem(method: "POST", host: host, origin: "https://chat.example.org"))
        XCTAssertNil(loopback.problem(method: "GET", host: host, origin: "https://evil.example"))
        for method in ["POST", "PUT", "PATCH", "DELETE"] {
            for origin in ["https://evil.example", "null", "http://127.0.0.1:9999", "http://localhost:8080"] {
                let problem = loopback.problem(method: method, host: host, origin: origin)
                XCTAssertEqual(problem?.status, 403, "\(method) from \(origin)")
                XCTAssertEqual(problem?.code, "cross_origin")
            }
        }
        XCTAssertNil(loopback.problem(method: "POST", host: "localhost", origin: "http://localhost:80"),
                     "a default port is the same origin")
    }

    func testAnyHostIsAnsweredWhenNoListIsSet() {
        let open = OriginPolicy()
        XCTAssertNil(open.problem(method: "GET", host: "chat.example.org", origin: nil))
        XCTAssertNil(open.problem(method: "POST", host: "chat.example.org", origin: "https://chat.example.org"))
        XCTAssertEqual(open.problem(method: "POST", host: "chat.example.org", origin: "https://evil.example")?.status, 403)
    }

    func testEveryRouteOfARealServerChecksTheHost() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-origin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        try Data("<p>hi</p>".utf8).write(to: directory.appendingPathComponent("index.html"))
        let (server, base) = try startServer(self, configure: {
            $0.originPolicy = OriginPolicy(allowedHosts: OriginPolicy.loopbackHosts)
            $0.publicDirectory = directory.path
        }) { router in
            router.on("GET", "/api/health", immediate: { _ in .text("ok") })
            router.on("POST", "/api/things") { _ in .text("made", status: 201) }
            router.on("GET", "/api/events") { _ in
                HTTPResponse(body: .eventStream { writer in
                    writer.write("data: hi\n\n")
                    writer.finish()
                })
            }
        }
        let client = TestHTTPClient()
        for (method, path) in [("GET", "/api/health"), ("POST", "/api/things"), ("GET", "/api/events"), ("GET", "/"),
                               ("GET", "/index.html"), ("GET", "/nope")] {
            let foreign = try client.request(method, base + path, headers: [("Host", "evil.example:\(server.port)")],
                                             body: method == "POST" ? [] : nil)
            XCTAssertEqual(foreign.status, 421, "\(method) \(path)")
            XCTAssertTrue(foreign.text.contains("\"misdirected_request\""), foreign.text)
            let own = try client.request(method, base + path, headers: [("Host", "localhost:\(server.port)")],
                                         body: method == "POST" ? [] : nil)
            XCTAssertNotEqual(own.status, 421, "\(method) \(path)")
        }
        let crossSite = try client.request("POST", base + "/api/things", headers: [("Origin", "https://evil.example")],
                                           body: [])
        XCTAssertEqual(crossSite.status, 403)
        XCTAssertTrue(crossSite.text.contains("\"cross_origin\""), crossSite.text)
    }
}
