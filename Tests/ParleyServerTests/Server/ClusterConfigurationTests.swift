import ParleyServer
import XCTest

/// The settings of several nodes: PARLEY_REDIS_URL (which needs PARLEY_DATABASE_URL and never shows its
/// password), PARLEY_REDIS_PREFIX, PARLEY_LEASE_SECONDS and PARLEY_FAILOVER, each refused naming itself.
final class ClusterConfigurationTests: XCTestCase {
    /// PARLEY_REDIS_URL needs PARLEY_DATABASE_URL; a bad one is refused naming it, never its password.
    func testTheRedisURLNeedsPostgreSQLAndIsNeverShown() throws {
        let database = "postgres://parley@db/parley"
        let chosen = try ParleyConfiguration(environment: ["PARLEY_REDIS_URL": "redis://:s3cret@cache:6380/2",
                                                           "PARLEY_DATABASE_URL": database,
                                                           "PARLEY_REDIS_PREFIX": "team-a:"], arguments: [])
        XCTAssertEqual(chosen.redis?.description, "redis://:***@cache:6380/2")
        XCTAssertEqual(chosen.redisPrefix, "team-a:")
        XCTAssertNil(try ParleyConfiguration(environment: ["PARLEY_REDIS_URL": ""], arguments: []).redis)
        XCTAssertEqual(try ParleyConfiguration(environment: [:], arguments: []).redisPrefix, "parley:")
        XCTAssertThrowsError(try ParleyConfiguration(environment: ["PARLEY_REDIS_URL": "redis://cache:6379"], arguments: [])) {
            XCTAssertTrue("\($0)".contains("PARLEY_REDIS_URL needs PARLEY_DATABASE_URL"), "\($0)")
        }
        for bad in ["http://:s3cret@cache", "redis://:s3cret@cache:99999", "rediss://:s3cret@cache"] {
            XCTAssertThrowsError(try ParleyConfiguration(environment: ["PARLEY_REDIS_URL": bad, "PARLEY_DATABASE_URL": database],
                                                         arguments: [])) {
                XCTAssertTrue("\($0)".contains("PARLEY_REDIS_URL"), "\($0)")
                XCTAssertFalse("\($0)".contains("s3cret"), "\($0)")
            }
        }
    }

    func testLeaseAndFailoverAreReadAndBadValuesRefused() throws {
        let defaults = try ParleyConfiguration(environment: [:], arguments: [])
        XCTAssertEqual(defaults.failover, FailoverSettings(lease: .seconds(5), continuing: true))
        let set = try ParleyConfiguration(environment: ["PARLEY_LEASE_SECONDS": "2", "PARLEY_FAILOVER": "off"], arguments: [])
        XCTAssertEqual(set.failover, FailoverSettings(lease: .seconds(2), continuing: false))
        for (name, bad) in [("PARLEY_LEASE_SECONDS", "1"), ("PARLEY_LEASE_SECONDS", "soon"), ("PARLEY_FAILOVER", "maybe")] {
            XCTAssertThrowsError(try ParleyConfiguration(environment: [name: bad], arguments: [])) {
                XCTAssertTrue("\($0)".contains(name), "\($0)")
            }
        }
    }
}
