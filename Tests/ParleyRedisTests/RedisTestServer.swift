import Foundation
import ParleyRedis
import XCTest

/// The Redis server the tests run against: `PARLEY_TEST_REDIS_URL` (`make test` starts one with
/// scripts/redis-test-server.sh). Without it a test is skipped, unless `PARLEY_REQUIRE_REDIS=1`
/// (as in `make test`), where it fails: a missing server must not pass as a green run.
enum RedisTestServer {
    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "PARLEY_REQUIRE_REDIS=1 but PARLEY_TEST_REDIS_URL is not set (scripts/redis-test-server.sh start DIR prints one)"
        }
    }

    static func url() throws -> RedisURL {
        let environment = ProcessInfo.processInfo.environment
        guard let text = environment["PARLEY_TEST_REDIS_URL"], !text.isEmpty else {
            if environment["PARLEY_REQUIRE_REDIS"] == "1" { throw Missing() }
            throw XCTSkip("PARLEY_TEST_REDIS_URL is not set (scripts/redis-test-server.sh start DIR prints one)")
        }
        return try RedisURL(parsing: text)
    }

    /// A connection to the shared test server, with short timeouts.
    static func connection(commandTimeout: Duration = .seconds(2)) throws -> RedisConnection {
        RedisConnection(url: try url(), connectTimeout: .seconds(2), commandTimeout: commandTimeout)
    }

    /// A key no other test (or earlier run) uses.
    static func key(_ name: String) -> String {
        "parley-test:\(name):\(UUID().uuidString)"
    }
}

/// A redis-server of the test's own (scripts/redis-test-server.sh in a temp dir), for tests that
/// stop, restart or reconfigure it. Runs only where the shared server runs (so redis-server is there).
final class PrivateRedisServer {
    let directory: String
    private(set) var url: RedisURL

    init() throws {
        _ = try RedisTestServer.url()
        directory = "/tmp/parley-redis-\(UUID().uuidString.prefix(8))"
        url = RedisURL(endpoint: .tcp(host: "127.0.0.1", port: 1))
        url = try RedisURL(parsing: try run("start"))
    }

    var socketPath: String { "\(directory)/redis.sock" }

    func start() throws { _ = try run("start") }
    func stop() throws { _ = try run("stop") }

    func remove() {
        _ = try? run("stop")
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func run(_ action: String) throws -> String {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/redis-test-server.sh")
        let process = Process()
        process.executableURL = script
        process.arguments = [action, directory]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw RedisError.connection("redis-test-server.sh \(action) exited \(process.terminationStatus)")
        }
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
