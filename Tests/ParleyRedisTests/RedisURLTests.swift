import ParleyRedis
import XCTest

/// `PARLEY_REDIS_URL` parsing: the accepted forms, clear errors for the rest, and no password printed.
final class RedisURLTests: XCTestCase {
    func testTCPForms() throws {
        XCTAssertEqual(try RedisURL(parsing: "redis://localhost"), RedisURL(endpoint: .tcp(host: "localhost", port: 6379)))
        XCTAssertEqual(try RedisURL(parsing: "redis://10.0.0.5:6380/3"),
                       RedisURL(endpoint: .tcp(host: "10.0.0.5", port: 6380), database: 3))
        XCTAssertEqual(try RedisURL(parsing: "REDIS://h:1/"), RedisURL(endpoint: .tcp(host: "h", port: 1)))
        XCTAssertEqual(try RedisURL(parsing: "redis://[::1]:7000"), RedisURL(endpoint: .tcp(host: "::1", port: 7000)))
        XCTAssertEqual(try RedisURL(parsing: "redis://[::1]"), RedisURL(endpoint: .tcp(host: "::1", port: 6379)))
        XCTAssertEqual(try RedisURL(parsing: "redis://h?db=2"), RedisURL(endpoint: .tcp(host: "h", port: 6379), database: 2))
    }

    func testCredentials() throws {
        XCTAssertEqual(try RedisURL(parsing: "redis://:s3cret@h:6379"),
                       RedisURL(endpoint: .tcp(host: "h", port: 6379), user: nil, password: "s3cret"))
        XCTAssertEqual(try RedisURL(parsing: "redis://parley:p%40ss%3Aw%2Fd@h/1"),
                       RedisURL(endpoint: .tcp(host: "h", port: 6379), user: "parley", password: "p@ss:w/d", database: 1))
        // The last "@" ends the credentials, so an unencoded "@" in the password still parses.
        XCTAssertEqual(try RedisURL(parsing: "redis://u:a@b@h").password, "a@b")
    }

    func testUnixForms() throws {
        XCTAssertEqual(try RedisURL(parsing: "redis+unix:///run/redis/redis.sock"),
                       RedisURL(endpoint: .unix(path: "/run/redis/redis.sock")))
        XCTAssertEqual(try RedisURL(parsing: "unix:///tmp/r.sock?db=4"), RedisURL(endpoint: .unix(path: "/tmp/r.sock"), database: 4))
        XCTAssertEqual(try RedisURL(parsing: "redis+unix://u:pw@/tmp/r.sock"),
                       RedisURL(endpoint: .unix(path: "/tmp/r.sock"), user: "u", password: "pw"))
    }

    func testErrorsSayWhatIsWrong() {
        let cases: [(String, RedisURLError)] = [
            ("localhost:6379", .notAURL),
            ("http://h", .unsupportedScheme("http")),
            ("rediss://h", .tlsUnsupported),
            ("redis://", .missingHost),
            ("redis://:6379", .missingHost),
            ("redis://h:0", .badPort("0")),
            ("redis://h:65536", .badPort("65536")),
            ("redis://h:12ab", .badPort("12ab")),
            ("redis://h:", .badPort("")),
            ("redis://h/x", .badDatabase("x")),
            ("redis://h/-1", .badDatabase("-1")),
            ("redis://h?db=99999999", .badDatabase("99999999")),
            ("redis://h?timeout=3", .unknownParameter("timeout")),
            ("redis://secret@h", .userWithoutPassword),
            ("redis://u:@h", .emptyPassword),
            ("redis://u:%zz@h", .badPercentEncoding(part: "password")),
            ("redis://[::1", .badHost),
            ("redis://h h", .badHost),
            ("redis+unix://relative.sock", .socketPathNotAbsolute),
            ("redis+unix://", .socketPathNotAbsolute),
            ("redis+unix:///" + String(repeating: "a", count: 120), .socketPathTooLong(121)),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try RedisURL(parsing: text), text) { error in
                XCTAssertEqual(error as? RedisURLError, expected, text)
                XCTAssertFalse("\(error)".isEmpty)
            }
        }
    }

    func testThePasswordIsNeverPrinted() throws {
        let url = try RedisURL(parsing: "redis://parley:hunter2-secret@db.internal:6380/2")
        XCTAssertEqual(url.description, "redis://parley:***@db.internal:6380/2")
        var dumped = ""
        dump(url, to: &dumped)
        for shown in [url.description, "\(url)", String(reflecting: url), dumped, "\([url])", "\(Optional(url) as Any)"] {
            XCTAssertFalse(shown.contains("hunter2"), shown)
        }
        XCTAssertEqual(try RedisURL(parsing: "redis+unix://:pw@/tmp/r.sock?db=1").description, "redis+unix://:***@/tmp/r.sock?db=1")
        XCTAssertEqual(try RedisURL(parsing: "redis://[::1]").description, "redis://[::1]:6379")
        // Parse errors do not quote the password either.
        for text in ["redis://u:hunter2@h:99999", "redis://u:hunter2@h/x", "redis://u:hunter2@h:0"] {
            XCTAssertThrowsError(try RedisURL(parsing: text)) { error in
                XCTAssertFalse("\(error)".contains("hunter2"), "\(error)")
            }
        }
    }

    func testEventIDsMapToStreamIDs() {
        XCTAssertEqual(RedisStreamID(eventID: 42)?.description, "42-0")
        XCTAssertEqual(RedisStreamID("42-0")?.eventID, 42)
        XCTAssertEqual(RedisStreamID("42")?.eventID, 42)
        XCTAssertNil(RedisStreamID(eventID: 0))
        XCTAssertNil(RedisStreamID("42-1")?.eventID)
        XCTAssertNil(RedisStreamID("4x-0"))
        XCTAssertNil(RedisStreamID("-1"))
        XCTAssertNil(RedisStreamID("1-"))
        XCTAssertLessThan(RedisStreamID(eventID: 9)!, RedisStreamID(eventID: 10)!)
        XCTAssertLessThan(RedisStreamID("9-5")!, RedisStreamID(eventID: 10)!)
    }
}
