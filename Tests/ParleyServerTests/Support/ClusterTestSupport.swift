import Foundation
@testable import ParleyStore
import ParleyTestSupport
import XCTest

/// Two (or more) Parleys sharing one PostgreSQL database and one Redis (PARLEY_DATABASE_URL,
/// PARLEY_REDIS_URL): nodes of one cluster, each a real server on its own port. Every cluster gets a
/// fresh database (dropped when the test ends) and its own Redis key prefix, so tests never see each
/// other's keys. Needs `PARLEY_TEST_POSTGRES_URL` and `PARLEY_TEST_REDIS_URL` (`make test` sets both);
/// skips without them unless `PARLEY_REQUIRE_POSTGRES=1` / `PARLEY_REQUIRE_REDIS=1`.
struct ClusterServices {
    let postgres: String
    let redis: String

    init() throws {
        let environment = ProcessInfo.processInfo.environment
        func required(_ name: String, _ flag: String) throws -> String {
            if let value = environment[name], !value.isEmpty { return value }
            if environment[flag] == "1" { XCTFail("\(flag)=1 but \(name) is not set") }
            throw XCTSkip("\(name) is not set")
        }
        postgres = try required("PARLEY_TEST_POSTGRES_URL", "PARLEY_REQUIRE_POSTGRES")
        redis = try required("PARLEY_TEST_REDIS_URL", "PARLEY_REQUIRE_REDIS")
    }

    /// The same Redis with another PostgreSQL server (one a test stops and starts).
    init(postgres: String, redis: String) {
        self.postgres = postgres
        self.redis = redis
    }

    /// A fresh database's URL; `drop` removes it.
    func database() throws -> (url: String, name: String) {
        let name = "parley_cluster_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        try PostgresDatabase(url: postgres, applicationName: "parley-tests").execute("CREATE DATABASE \(name)")
        var components = try XCTUnwrap(URLComponents(string: postgres))
        components.path = "/" + name
        return (try XCTUnwrap(components.string), name)
    }

    func drop(_ name: String) {
        try? PostgresDatabase(url: postgres, applicationName: "parley-tests").execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}

extension XCTestCase {
    /// The settings every node of one new cluster shares (its database, Redis and key prefix), merged
    /// with `extra`; the database is dropped when the test ends.
    func clusterSettings(_ services: ClusterServices, _ extra: [String: String] = [:],
                         redis: String? = nil) throws -> [String: String] {
        let (url, name) = try services.database()
        addTeardownBlock { services.drop(name) }
        let prefix = "parley-test-" + UUID().uuidString.prefix(8).lowercased() + ":"
        return ["PARLEY_DATABASE_URL": url, "PARLEY_REDIS_URL": redis ?? services.redis, "PARLEY_REDIS_PREFIX": prefix]
            .merging(extra) { $1 }
    }
}

/// A redis-server of one test's own (scripts/redis-test-server.sh in a temp dir), to restart under
/// running nodes: nothing is persisted, so a restart loses every key, as a crashed cache does.
final class OwnRedisServer: Sendable {
    let directory: String
    let url: String
    private static let script = TestParley.repositoryRoot.appendingPathComponent("scripts/redis-test-server.sh")

    init() throws {
        directory = "/tmp/parley-redis-" + UUID().uuidString.prefix(8).lowercased()
        url = try Self.run("start", directory)
    }

    /// Stops it and starts it again on the same port.
    func restart() throws {
        _ = try Self.run("stop", directory)
        _ = try Self.run("start", directory)
    }

    func remove() {
        _ = try? Self.run("stop", directory)
        try? FileManager.default.removeItem(atPath: directory)
    }

    @discardableResult
    private static func run(_ action: String, _ directory: String) throws -> String {
        let process = try SpawnedProcess(executable: URL(fileURLWithPath: "/bin/bash"),
                                         arguments: [script.path, action, directory],
                                         environment: ProcessInfo.processInfo.environment)
        let output = String(decoding: process.standardOutput.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestParleyError.timedOut("scripts/redis-test-server.sh \(action) failed (\(process.terminationStatus))")
        }
        return output.split(separator: "\n").last.map(String.init) ?? ""
    }
}
