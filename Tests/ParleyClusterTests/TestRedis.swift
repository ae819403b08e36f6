import Foundation
import ParleyRedis
import XCTest

/// The Redis of the tests (`make test` sets `PARLEY_TEST_REDIS_URL`; skipped without it unless
/// `PARLEY_REQUIRE_REDIS=1`) and a key prefix of one test's own, so tests never see each other's keys.
enum TestRedis {
    static func url() throws -> RedisURL {
        let environment = ProcessInfo.processInfo.environment
        guard let text = environment["PARLEY_TEST_REDIS_URL"], !text.isEmpty else {
            if environment["PARLEY_REQUIRE_REDIS"] == "1" { XCTFail("PARLEY_REQUIRE_REDIS=1 but PARLEY_TEST_REDIS_URL is not set") }
            throw XCTSkip("PARLEY_TEST_REDIS_URL is not set")
        }
        return try RedisURL(parsing: text)
    }

    static func prefix() -> String {
        "parley-test-" + UUID().uuidString.prefix(8).lowercased() + ":"
    }
}
