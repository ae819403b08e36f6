import Foundation
import ParleyRedis
import XCTest

/// Against a redis-server of the test's own: restarts, a password, a database, the Unix socket.
final class RedisPrivateServerTests: XCTestCase {
    /// A server that goes away fails calls with `.connection`; once it is back on the same address
    /// the same connection (and pool) works again without being remade.
    func testReconnectAfterTheServerRestarts() throws {
        let server = try PrivateRedisServer()
        defer { server.remove() }
        let redis = RedisConnection(url: server.url, connectTimeout: .seconds(1), commandTimeout: .seconds(1))
        let pool = RedisConnectionPool(url: server.url, size: 2, connectTimeout: .seconds(1), commandTimeout: .seconds(1))
        let stream = RedisTestServer.key("restart")
        XCTAssertEqual(try redis.xadd(stream, id: RedisStreamID(eventID: 1)!, fields: [.init("t", "a")]), .accepted)
        try pool.withConnection { try $0.ping() }
        try server.stop()
        XCTAssertThrowsError(try redis.ping()) { error in
            guard case .connection = error as? RedisError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try pool.withConnection { try $0.ping() })
        try server.start()
        try redis.ping()
        try pool.withConnection { try $0.ping() }
        // Nothing was persisted: the restarted server starts empty, and event 1 is accepted again.
        XCTAssertEqual(try redis.xrange(stream, after: nil, count: 10), [])
        XCTAssertEqual(try redis.xadd(stream, id: RedisStreamID(eventID: 1)!, fields: [.init("t", "a")]), .accepted)
    }

    /// AUTH with the URL's user and password, SELECT with its database; a wrong password is a
    /// connection error that does not quote it.
    func testSignInAndDatabaseFromTheURL() throws {
        let server = try PrivateRedisServer()
        defer { server.remove() }
        let admin = RedisConnection(url: server.url)
        _ = try admin.command(["ACL", "SETUSER", "parley", "on", ">right-horse", "~*", "&*", "+@all"])
        _ = try admin.command(["CONFIG", "SET", "requirepass", "default-pw"])
        guard case .tcp(let host, let port) = server.url.endpoint else { return XCTFail("tcp") }
        let signedIn = try RedisConnection(url: RedisURL(parsing: "redis://parley:right-horse@\(host):\(port)/5"))
        XCTAssertEqual(try signedIn.command(["ACL", "WHOAMI"]).text, "parley")
        _ = try signedIn.command(["SET", "k", "in five"])
        let defaultUser = try RedisConnection(url: RedisURL(parsing: "redis://:default-pw@\(host):\(port)"))
        XCTAssertEqual(try defaultUser.command(["GET", "k"]), .null)
        _ = try defaultUser.command(["SELECT", "5"])
        XCTAssertEqual(try defaultUser.command(["GET", "k"]).text, "in five")

        let wrong = try RedisConnection(url: RedisURL(parsing: "redis://parley:wrong-horse@\(host):\(port)"))
        XCTAssertThrowsError(try wrong.ping()) { error in
            guard case .connection(let text) = error as? RedisError else { return XCTFail("\(error)") }
            XCTAssertTrue(text.contains("WRONGPASS"), text)
            XCTAssertFalse(text.contains("wrong-horse"), text)
        }
        let none = RedisConnection(url: RedisURL(endpoint: .tcp(host: host, port: port)))
        XCTAssertThrowsError(try none.command(["GET", "k"])) { error in
            guard case .server(let text) = error as? RedisError else { return XCTFail("\(error)") }
            XCTAssertTrue(text.hasPrefix("NOAUTH"), text)
        }
        let missingDatabase = try RedisConnection(url: RedisURL(parsing: "redis://:default-pw@\(host):\(port)/99"))
        XCTAssertThrowsError(try missingDatabase.ping()) { error in
            guard case .connection(let text) = error as? RedisError else { return XCTFail("\(error)") }
            XCTAssertTrue(text.contains("database 99"), text)
        }
    }

    func testUnixSocket() throws {
        let server = try PrivateRedisServer()
        defer { server.remove() }
        let redis = try RedisConnection(url: RedisURL(parsing: "redis+unix://\(server.socketPath)?db=2"))
        _ = try redis.command(["SET", "k", "v"])
        XCTAssertEqual(try redis.command(["CLIENT", "INFO"]).text?.contains("db=2"), true)
        let missing = RedisConnection(url: RedisURL(endpoint: .unix(path: server.socketPath + ".gone")))
        XCTAssertThrowsError(try missing.ping()) { error in
            guard case .connection = error as? RedisError else { return XCTFail("\(error)") }
        }
    }
}
