import ParleyServer
import XCTest

/// Every setting of the README reaches its place; flags win over the environment; bad values are
/// refused with the setting's name.
final class ConfigurationTests: XCTestCase {
    func testDefaultsAreTheDocumentedOnes() throws {
        let configuration = try ParleyConfiguration(environment: [:], arguments: [])
        XCTAssertEqual(configuration.host, "127.0.0.1")
        XCTAssertEqual(configuration.port, 8080)
        XCTAssertEqual(configuration.databasePath, "./parley.db")
        XCTAssertEqual(configuration.publicDirectory, "./Public")
        XCTAssertEqual(configuration.http.maxBodyBytes, 1 << 20)
        XCTAssertEqual(configuration.generation.frameInterval, .milliseconds(25))
        XCTAssertEqual(configuration.generation.flushInterval, .milliseconds(200))
        XCTAssertTrue(configuration.http.defaultHeaders.contains { $0.0 == "Content-Security-Policy" })
    }

    func testEverySettingIsRead() throws {
        let configuration = try ParleyConfiguration(environment: [
            "PARLEY_HOST": "0.0.0.0", "PARLEY_PORT": "9001", "PARLEY_DB": "/tmp/x.db", "PARLEY_PUBLIC": "/srv/p",
            "PARLEY_THREADS": "3", "PARLEY_MAX_CONNECTIONS": "77", "PARLEY_MAX_BODY_BYTES": "2048",
            "PARLEY_CONNECTION_MEMORY_BYTES": "65536", "PARLEY_LISTEN_BACKLOG": "12", "PARLEY_SHUTDOWN_GRACE": "2",
            "PARLEY_CONNECTION_TIMEOUT": "30", "PARLEY_HEARTBEAT_INTERVAL": "5", "PARLEY_STREAM_BACKLOG_BYTES": "8192",
            "PARLEY_FRAME_INTERVAL_MS": "0", "PARLEY_FLUSH_INTERVAL_MS": "100", "PARLEY_MAX_REPLY_BYTES": "999",
            "PARLEY_MAX_GENERATIONS": "9", "PARLEY_MAX_GENERATIONS_PER_USER": "2",
            "PARLEY_CONTEXT_BUDGET_CHARS": "1234", "PARLEY_RETAIN_FINISHED_SECONDS": "7",
        ], arguments: [])
        XCTAssertEqual(configuration.http.host, "0.0.0.0")
        XCTAssertEqual(configuration.http.port, 9001)
        XCTAssertEqual(configuration.databasePath, "/tmp/x.db")
        XCTAssertEqual(configuration.http.publicDirectory, "/srv/p")
        XCTAssertEqual(configuration.http.threadPoolSize, 3)
        XCTAssertEqual(configuration.http.connectionLimit, 77)
        XCTAssertEqual(configuration.http.maxBodyBytes, 2048)
        XCTAssertEqual(configuration.http.connectionMemoryLimit, 65536)
        XCTAssertEqual(configuration.http.listenBacklog, 12)
        XCTAssertEqual(configuration.http.shutdownGracePeriod, 2)
        XCTAssertEqual(configuration.http.connectionTimeout, 30)
        XCTAssertEqual(configuration.http.heartbeatInterval, 5)
        XCTAssertEqual(configuration.http.streamBacklogLimit, 8192)
        XCTAssertEqual(configuration.generation.frameInterval, .zero)
        XCTAssertEqual(configuration.generation.flushInterval, .milliseconds(100))
        XCTAssertEqual(configuration.generation.maxReplyBytes, 999)
        XCTAssertEqual(configuration.generation.maxConcurrent, 9)
        XCTAssertEqual(configuration.generation.maxConcurrentPerUser, 2)
        XCTAssertEqual(configuration.generation.contextBudgetCharacters, 1234)
        XCTAssertEqual(configuration.generation.retainFinished, .seconds(7))
    }

    func testFlagsWinOverTheEnvironment() throws {
        let configuration = try ParleyConfiguration(environment: ["PARLEY_PORT": "1", "PARLEY_MAX_BODY_BYTES": "10"],
                                                    arguments: ["--port", "2", "--max-body-bytes=20"])
        XCTAssertEqual(configuration.port, 2)
        XCTAssertEqual(configuration.http.maxBodyBytes, 20)
        XCTAssertEqual(configuration.settings["PARLEY_PORT"], "2")
    }

    func testBadValuesNameTheSetting() {
        XCTAssertThrowsError(try ParleyConfiguration(environment: ["PARLEY_PORT": "70000"], arguments: [])) {
            XCTAssertTrue("\($0)".contains("PARLEY_PORT"))
        }
        XCTAssertThrowsError(try ParleyConfiguration(environment: ["PARLEY_HEARTBEAT_INTERVAL": "soon"], arguments: []))
        XCTAssertThrowsError(try ParleyConfiguration(environment: [:], arguments: ["port"]))
        XCTAssertThrowsError(try ParleyConfiguration(environment: [:], arguments: ["--port"]))
    }
}
