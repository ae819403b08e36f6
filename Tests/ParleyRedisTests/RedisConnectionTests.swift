import Foundation
import ParleyRedis
import XCTest

/// One connection against a real redis-server: bytes kept exact, errors typed, timeouts, reconnects.
final class RedisConnectionTests: XCTestCase {
    /// `\0`, bytes that are not UTF-8, and "€" cut after its second byte all come back as sent.
    func testBinarySafeRoundTrip() throws {
        let redis = try RedisTestServer.connection()
        let key = RedisTestServer.key("binary")
        defer { _ = try? redis.del([key]) }
        let euro = Array("€".utf8)
        let value: [UInt8] = [0, 1, 0, 0xFF, 0xFE] + Array("a\r\nb".utf8) + euro.prefix(2)
        XCTAssertEqual(try redis.command(["SET", RedisArgument(key), RedisArgument(bytes: value)]), .status("OK"))
        XCTAssertEqual(try redis.command(["GET", RedisArgument(key)]), .string(value))
        XCTAssertEqual(try redis.command(["APPEND", RedisArgument(key), RedisArgument(bytes: Array(euro.suffix(1)))]),
                       .integer(Int64(value.count + 1)))
        XCTAssertEqual(try redis.command(["GETRANGE", RedisArgument(key), "-3", "-1"]), .string(euro))
        // An empty value and a missing key are different answers.
        XCTAssertEqual(try redis.command(["SET", RedisArgument(key), RedisArgument(bytes: [])]), .status("OK"))
        XCTAssertEqual(try redis.command(["GET", RedisArgument(key)]), .string([]))
        XCTAssertEqual(try redis.command(["GET", RedisArgument(key + ":missing")]), .null)
    }

    func testReplyKinds() throws {
        let redis = try RedisTestServer.connection()
        let key = RedisTestServer.key("kinds")
        defer { _ = try? redis.del([key]) }
        try redis.ping()
        XCTAssertEqual(try redis.command(["RPUSH", RedisArgument(key), "a", "", "c"]), .integer(3))
        XCTAssertEqual(try redis.command(["LRANGE", RedisArgument(key), "0", "-1"]),
                       .array([.string(Array("a".utf8)), .string([]), .string(Array("c".utf8))]))
        // A pipeline keeps each answer in its place, an error reply included, and the connection goes on.
        let replies = try redis.pipeline([["LLEN", RedisArgument(key)], ["INCR", RedisArgument(key)], ["PING"]])
        XCTAssertEqual(replies.count, 3)
        XCTAssertEqual(replies[0], .integer(3))
        XCTAssertTrue(replies[1].errorText?.hasPrefix("WRONGTYPE") == true, "\(replies[1])")
        XCTAssertEqual(replies[2], .status("PONG"))
    }

    /// An error reply is `RedisError.server` with the server's own text, and the connection stays usable.
    func testServerErrorText() throws {
        let redis = try RedisTestServer.connection()
        let key = RedisTestServer.key("error")
        defer { _ = try? redis.del([key]) }
        _ = try redis.command(["SET", RedisArgument(key), "not a number"])
        XCTAssertThrowsError(try redis.command(["INCR", RedisArgument(key)])) { error in
            XCTAssertEqual(error as? RedisError, .server("ERR value is not an integer or out of range"))
        }
        XCTAssertThrowsError(try redis.command(["NOSUCHCOMMAND"])) { error in
            guard case .server(let text) = error as? RedisError else { return XCTFail("\(error)") }
            XCTAssertTrue(text.hasPrefix("ERR unknown command"), text)
        }
        XCTAssertTrue(redis.isConnected)
        try redis.ping()
    }

    /// No answer within the command timeout is `.timeout`, in about that time; the next call reconnects.
    func testTimeout() throws {
        let redis = try RedisTestServer.connection(commandTimeout: .milliseconds(200))
        let key = RedisTestServer.key("timeout")
        let started = ContinuousClock.now
        XCTAssertThrowsError(try redis.command(["BLPOP", RedisArgument(key), "2"])) { error in
            XCTAssertEqual(error as? RedisError, .timeout)
        }
        let waited = ContinuousClock.now - started
        XCTAssertGreaterThanOrEqual(waited, .milliseconds(190))
        XCTAssertLessThan(waited, .milliseconds(1500))
        XCTAssertFalse(redis.isConnected)
        try redis.ping()
    }

    /// A connection the server killed while it was idle is noticed before the next command, which
    /// goes out on a new connection and succeeds.
    func testReconnectAfterClientKill() throws {
        let redis = try RedisTestServer.connection()
        let killer = try RedisTestServer.connection()
        guard let before = try redis.command(["CLIENT", "ID"]).integer else { return XCTFail("CLIENT ID") }
        XCTAssertEqual(try killer.command(["CLIENT", "KILL", "ID", RedisArgument(before)]), .integer(1))
        guard let after = try redis.command(["CLIENT", "ID"]).integer else { return XCTFail("CLIENT ID") }
        XCTAssertNotEqual(before, after)
    }

    /// A killed connection in the middle of a command fails that command (it is not resent: it may
    /// have run), and the one after reconnects.
    func testAConnectionLostMidCommandFailsThatCommandOnly() throws {
        let redis = try RedisTestServer.connection(commandTimeout: .seconds(5))
        let url = try RedisTestServer.url()
        guard let id = try redis.command(["CLIENT", "ID"]).integer else { return XCTFail("CLIENT ID") }
        let key = RedisTestServer.key("blocked")
        let kill = Thread {
            Thread.sleep(forTimeInterval: 0.2)
            _ = try? RedisConnection(url: url).command(["CLIENT", "KILL", "ID", RedisArgument(id)])
        }
        kill.start()
        XCTAssertThrowsError(try redis.command(["BLPOP", RedisArgument(key), "3"])) { error in
            guard case .connection = error as? RedisError else { return XCTFail("\(error)") }
        }
        try redis.ping()
    }

    func testUnreachableServerIsAConnectionError() throws {
        _ = try RedisTestServer.url()
        let redis = RedisConnection(url: RedisURL(endpoint: .tcp(host: "127.0.0.1", port: 1)), connectTimeout: .seconds(1))
        XCTAssertThrowsError(try redis.ping()) { error in
            guard case .connection(let text) = error as? RedisError else { return XCTFail("\(error)") }
            XCTAssertTrue(text.contains("127.0.0.1:1"), text)
        }
    }
}

extension RedisReply {
    var errorText: String? {
        if case .error(let text) = self { text } else { nil }
    }
}
