import Foundation
import ParleyHTTP
import ParleyTestSupport
import XCTest

private struct Greeting: Codable, Equatable {
    var id: String
    var name: String?
}

final class HTTPServerTests: XCTestCase {
    private func routes(_ router: inout Router) {
        router.on("GET", "/api/items/:id") { request in
            .json(Greeting(id: request.parameters["id"] ?? "", name: request.query["name"]))
        }
        router.on("POST", "/api/echo") { request in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/octet-stream")], body: .bytes(request.body))
        }
        router.on("GET", "/api/header") { request in .text(request.header("x-MiXeD") ?? "none") }
        router.on("GET", "/api/teapot") { _ in throw HTTPError(status: 418, code: "teapot", message: "short") }
        router.on("GET", "/api/secret-failure") { _ in throw CocoaError(.fileReadNoPermission, userInfo: ["k": "SECRET"]) }
        router.on("GET", "/api/hello") { _ in .json(["hello": "world"]) }
        router.on("GET", "/api/now/:id", immediate: { request in .text("now " + (request.parameters["id"] ?? "")) })
        router.on("GET", "/api/now-teapot", immediate: { _ in throw HTTPError(status: 418, code: "teapot", message: "short") })
    }

    func testImmediateRouteAnswersWithParametersOverKeepAlive() throws {
        let (_, base) = try startServer(self, routes: routes)
        let client = TestHTTPClient()
        for id in ["a", "b"] {
            let response = try client.request(base + "/api/now/" + id)
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "now " + id)
            XCTAssertEqual(response.header("X-Content-Type-Options"), "nosniff")
        }
    }

    func testImmediateRouteErrorBecomesItsHTTPError() throws {
        let (_, base) = try startServer(self, routes: routes)
        let response = try TestHTTPClient().request(base + "/api/now-teapot")
        XCTAssertEqual(response.status, 418)
    }

    func testRouteReceivesPathParameterAndQuery() throws {
        let (_, base) = try startServer(self, routes: routes)
        let response = try TestHTTPClient().request(url(base, "/api/items/a%20b?name=J%C3%BCrgen+X"))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(try JSONDecoder().decode(Greeting.self, from: Data(response.body)), Greeting(id: "a b", name: "Jürgen X"))
        XCTAssertEqual(response.header("Content-Type"), "application/json; charset=utf-8")
    }

    func testEveryResponseCarriesNosniffAndDefaultHeaders() throws {
        let (_, base) = try startServer(self, configure: { $0.defaultHeaders = [("X-Test-Policy", "strict")] }, routes: routes)
        let client = TestHTTPClient()
        for path in ["/api/hello", "/api/nothing-here"] {
            let response = try client.request(base + path)
            XCTAssertEqual(response.header("X-Content-Type-Options"), "nosniff", path)
            XCTAssertEqual(response.header("X-Test-Policy"), "strict", path)
        }
    }

    func testHeaderLookupIsCaseInsensitive() throws {
        let (_, base) = try startServer(self, routes: routes)
        let response = try TestHTTPClient().request(base + "/api/header", headers: [("X-Mixed", "yes")])
        XCTAssertEqual(response.text, "yes")
    }

    func testUnknownPathIsJSON404() throws {
        let (_, base) = try startServer(self, routes: routes)
        let response = try TestHTTPClient().request(base + "/api/nope")
        XCTAssertEqual(response.status, 404)
        XCTAssertEqual(response.text, #"{"error":{"code":"not_found","message":"Not found."}}"#)
    }

    func testWrongMethodIsJSON405WithAllow() throws {
        let (_, base) = try startServer(self, routes: routes)
        let response = try TestHTTPClient().request("DELETE", base + "/api/echo")
        XCTAssertEqual(response.status, 405)
        XCTAssertEqual(response.header("Allow"), "POST")
        XCTAssertTrue(response.text.contains(#""code":"method_not_allowed""#))
    }

    func testHeadUsesGetRouteWithoutBody() throws {
        let (_, base) = try startServer(self, routes: routes)
        let response = try TestHTTPClient().request("HEAD", base + "/api/hello")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.body, [])
        XCTAssertEqual(response.header("Content-Length"), "17")
    }

    func testThrownHTTPErrorIsRendered() throws {
        let (_, base) = try startServer(self, routes: routes)
        let response = try TestHTTPClient().request(base + "/api/teapot")
        XCTAssertEqual(response.status, 418)
        XCTAssertEqual(response.text, #"{"error":{"code":"teapot","message":"short"}}"#)
    }

    func testUnknownErrorIs500WithoutItsText() throws {
        let (_, base) = try startServer(self, routes: routes)
        let response = try TestHTTPClient().request(base + "/api/secret-failure")
        XCTAssertEqual(response.status, 500)
        XCTAssertTrue(response.text.contains(#""code":"internal""#))
        XCTAssertFalse(response.text.contains("SECRET"))
    }

    // MARK: - Bodies

    func testBodyAtTheLimitIsAccepted() throws {
        let (server, base) = try startServer(self, routes: routes)
        let body = (0..<server.configuration.maxBodyBytes).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let response = try TestHTTPClient().request("POST", base + "/api/echo", body: body)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.body, body)
    }

    func testOversizedBodyGets413AndServerKeepsServing() throws {
        let (_, base) = try startServer(self, routes: routes)
        let client = TestHTTPClient()
        let response = try client.request("POST", base + "/api/echo", body: [UInt8](repeating: 7, count: 5 << 20))
        XCTAssertEqual(response.status, 413)
        XCTAssertTrue(response.text.contains(#""code":"payload_too_large""#))
        XCTAssertEqual(try client.request(base + "/api/hello").status, 200)
        XCTAssertEqual(try TestHTTPClient().request(base + "/api/hello").status, 200)
    }

    /// Without Content-Length the overflow is only seen mid-body, where 0.9.75 cannot queue a response:
    /// the connection is closed instead, and the server stays healthy.
    func testOversizedChunkedBodyClosesConnection() throws {
        let (_, base) = try startServer(self, configure: { $0.maxBodyBytes = 64 * 1024 }, routes: routes)
        let client = TestHTTPClient()
        let outcome = Result {
            try client.request(
                "POST", base + "/api/echo", headers: [("Transfer-Encoding", "chunked")],
                body: [UInt8](repeating: 1, count: 1 << 20))
        }
        if case .success(let response) = outcome { XCTFail("expected a closed connection, got \(response.status)") }
        XCTAssertEqual(try TestHTTPClient().request(base + "/api/hello").status, 200)
    }

    // MARK: - Connections

    func testKeepAliveReusesOneConnection() throws {
        let (_, base) = try startServer(self, routes: routes)
        let client = TestHTTPClient()
        XCTAssertEqual(try client.request(base + "/api/hello").status, 200)
        let port = client.lastLocalPort
        for _ in 0..<5 {
            XCTAssertEqual(try client.request(base + "/api/hello").status, 200)
            XCTAssertEqual(client.lastConnectsOpened, 0)
            XCTAssertEqual(client.lastLocalPort, port)
        }
    }

    func testTwoHundredConcurrentKeepAliveClients() throws {
        let (_, base) = try startServer(self, routes: routes)
        let successes = Counter()
        let reused = Counter()
        onThreads(200) { _ in
            let client = TestHTTPClient()
            for round in 0..<5 {
                guard let response = try? client.request(base + "/api/hello"), response.status == 200 else { continue }
                successes.increment()
                if round > 0 && client.lastConnectsOpened == 0 { reused.increment() }
            }
        }
        XCTAssertEqual(successes.current, 1000)
        XCTAssertEqual(reused.current, 800)
    }

    func testPortZeroBindsARealPort() throws {
        let (server, _) = try startServer(self, routes: routes)
        XCTAssertGreaterThan(server.port, 0)
    }

    func testSecondStartFails() throws {
        let (server, _) = try startServer(self, routes: routes)
        XCTAssertThrowsError(try server.start())
    }

    /// Reports throughput; the only assertion is that every request succeeded.
    func testMeasureSmallJSONRequestsPerSecond() throws {
        let (_, base) = try startServer(self, routes: routes)
        let threads = 4
        let perThread = 1500
        let successes = Counter()
        let started = Date()
        let cpuBefore = processCPUSeconds()
        onThreads(threads) { _ in
            let client = TestHTTPClient()
            for _ in 0..<perThread where (try? client.request(base + "/api/hello"))?.status == 200 {
                successes.increment()
            }
        }
        let elapsed = Date().timeIntervalSince(started)
        let cpu = processCPUSeconds() - cpuBefore
        print("MEASURE small JSON GET: \(Int(Double(threads * perThread) / elapsed)) req/s over \(threads) keep-alive clients, "
            + "process CPU \(Int(cpu / Double(threads * perThread) * 1e6)) us/request (server + curl clients)")
        XCTAssertEqual(successes.current, threads * perThread)
    }

    private func url(_ base: String, _ path: String) -> String { base + path }
}
