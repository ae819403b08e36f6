import Foundation
@testable import ParleyStore
import ParleyTestSupport
import XCTest

/// A real server on the PostgreSQL store (`PARLEY_DATABASE_URL`): replies stream, are stored and survive
/// a restart; while PostgreSQL is down requests answer 503 `store_unavailable` (nothing goes upstream)
/// and `/api/health` says so; when it is back the same server answers again, by itself.
/// Needs `PARLEY_TEST_POSTGRES_URL` (`make test` sets it); skips without it unless `PARLEY_REQUIRE_POSTGRES=1`.
final class PostgresServerTests: XCTestCase {
    private var server = ""
    private var databases: [String] = []

    override func setUpWithError() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["PARLEY_TEST_POSTGRES_URL"], !url.isEmpty else {
            if environment["PARLEY_REQUIRE_POSTGRES"] == "1" {
                XCTFail("PARLEY_REQUIRE_POSTGRES=1 but PARLEY_TEST_POSTGRES_URL is not set")
            }
            throw XCTSkip("PARLEY_TEST_POSTGRES_URL is not set")
        }
        server = url
    }

    override func tearDownWithError() throws {
        for name in databases {
            try? PostgresDatabase(url: server, applicationName: "parley-tests")
                .execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        }
    }

    /// A fresh database on `server` (default: the run's), dropped after the test; its URL.
    private func database(on server: String? = nil) throws -> String {
        let name = "parley_server_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        try PostgresDatabase(url: server ?? self.server, applicationName: "parley-tests").execute("CREATE DATABASE \(name)")
        if server == nil { databases.append(name) }
        var components = try XCTUnwrap(URLComponents(string: server ?? self.server))
        components.path = "/" + name
        return try XCTUnwrap(components.string)
    }

    func testARepliesStreamIsStoredAndSurvivesARestart() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(UpstreamStreams.complete(["Tomatoes ", "ripen in ", "August 🍅"]))
        let url = try database()
        var parley = try startParley(upstream: upstream, ["PARLEY_DATABASE_URL": url])
        let id = try await parley.conversation(["title": "Garden"])
        let (_, assistant) = try await parley.send(id, "When do tomatoes ripen?")
        let finished = try await parley.finished(assistant)
        XCTAssertEqual(finished["content"] as? String, "Tomatoes ripen in August 🍅")
        XCTAssertEqual(finished["status"] as? String, "complete")
        let found = try await parley.call("GET", "/api/conversations?q=tomatoes")
        XCTAssertEqual(found.status, 200, found.text)
        XCTAssertEqual((found.json["items"] as? [[String: Any]])?.count, 1, found.text)
        await parley.stop()

        parley = try startParley(["PARLEY_DATABASE_URL": url])
        let shown = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(shown.json["title"] as? String, "Garden")
        let messages = try XCTUnwrap(shown.json["messages"] as? [[String: Any]])
        XCTAssertEqual(messages.map { $0["content"] as? String }, ["When do tomatoes ripen?", "Tomatoes ripen in August 🍅"])
        let health = try await parley.call("GET", "/api/health")
        XCTAssertEqual(health.status, 200)
    }

    func testABadDatabaseURLIsAStartupErrorWithoutItsPassword() throws {
        XCTAssertThrowsError(try TestParley(["PARLEY_DATABASE_URL": "postgres://parley:s3cret@127.0.0.1:1/none"])) { error in
            XCTAssertFalse("\(error)".contains("s3cret"), "\(error)")
        }
    }

    /// PostgreSQL stopped under a running server, then started again: 503 `store_unavailable` with
    /// `Retry-After` meanwhile, nothing sent upstream, health 503 naming the store; then the server
    /// answers again without a restart.
    func testAStoreThatGoesDownAnswers503AndComesBackByItself() async throws {
        // Short and under /tmp: the postgres user must reach it, and its unix socket path stays short.
        let directory = URL(fileURLWithPath: "/tmp/parley-pg-" + UUID().uuidString.prefix(8).lowercased())
        defer { try? FileManager.default.removeItem(at: directory) }
        let own = try PostgresTestServer(directory: directory)
        defer { own.stop() }
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream, ["PARLEY_DATABASE_URL": try database(on: own.url)])
        let id = try await parley.conversation(["title": "Before"])

        own.stop()
        let listed = try await parley.call("GET", "/api/conversations")
        XCTAssertEqual(listed.status, 503, listed.text)
        XCTAssertEqual(listed.errorCode, "store_unavailable")
        XCTAssertEqual(listed.headers["retry-after"], "2")
        let sent = try await parley.call("POST", "/api/conversations/\(id)/messages", json: ["content": "hello"])
        XCTAssertEqual(sent.status, 503, sent.text)
        XCTAssertEqual(upstream.requests.count, 0, "nothing goes upstream while the store is down")
        let health = try await parley.call("GET", "/api/health")
        XCTAssertEqual(health.status, 503)
        XCTAssertEqual(health.json["down"] as? [String], ["store"])

        try own.start()
        let back = try await Deadline(.seconds(15)).wait(every: .milliseconds(200)) {
            try await parley.call("GET", "/api/conversations/\(id)").status == 200
        }
        XCTAssertTrue(back, "the server answers again once PostgreSQL is back")
        let healthy = try await parley.call("GET", "/api/health")
        XCTAssertEqual(healthy.status, 200)
    }
}
