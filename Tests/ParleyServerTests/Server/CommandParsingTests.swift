import ParleyCLI
import ParleyServer
import XCTest

/// `ParleyCommand`: which command the arguments name, and `HealthCheck`'s target for a configuration.
final class CommandParsingTests: XCTestCase {
    private func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws -> ParleyCommand {
        try ParleyCommand(environment: environment, arguments: arguments)
    }

    func testNoCommandOrFlagsFirstServes() throws {
        guard case .serve(let configuration) = try parse(["--port", "9000"]) else { return XCTFail() }
        XCTAssertEqual(configuration.port, 9000)
        guard case .serve = try parse([]) else { return XCTFail() }
        guard case .serve = try parse(["serve"]) else { return XCTFail() }
    }

    func testBackupTakesOneFileForceAndSettingsInAnyOrder() throws {
        guard case .backup(let configuration, let destination, let replacing) =
                try parse(["backup", "--db", "/data/parley.db", "copy.db", "--force"], ["PARLEY_DB": "other.db"])
        else { return XCTFail() }
        XCTAssertEqual(configuration.databasePath, "/data/parley.db", "the flag wins over the environment")
        XCTAssertEqual(destination, "copy.db")
        XCTAssertTrue(replacing)
        guard case .backup(_, "x.db", false) = try parse(["backup", "x.db"]) else { return XCTFail() }
    }

    func testMediaWorkerIsNoLongerACommandAndTheErrorNamesTheExecutable() {
        XCTAssertThrowsError(try parse(["media-worker"])) { error in
            XCTAssertTrue("\(error)".contains("parley-media-worker"), "\(error)")
            XCTAssertFalse("\(error)".contains("\n"), "one line: \(error)")
        }
    }

    func testBadUseIsAUsageError() {
        for arguments in [["backup"], ["backup", "a.db", "b.db"], ["backup", "--db"], ["frobnicate"],
                          ["healthcheck", "--port", "http"]] {
            XCTAssertThrowsError(try parse(arguments), "\(arguments)") { error in
                XCTAssertFalse("\(error)".contains("\n"), "one line: \(error)")
            }
        }
    }

    func testHealthCheckAsksLoopbackWithAHostTheServerAnswers() throws {
        func target(_ environment: [String: String]) throws -> (url: String, host: String?) {
            let command = try parse(["healthcheck"], environment)
            guard case .healthcheck(let configuration) = command else {
                // A wrong command is a failure of this test, never a reason to skip it.
                throw NotAHealthCheck(command: "\(command)")
            }
            return HealthCheck.target(configuration)
        }
        let docker = try target(["PARLEY_HOST": "0.0.0.0", "PARLEY_PORT": "8080"])
        XCTAssertEqual(docker.url, "http://127.0.0.1:8080/api/health")
        XCTAssertNil(docker.host)
        XCTAssertEqual(try target(["PARLEY_HOST": "::"]).url, "http://[::1]:8080/api/health")
        XCTAssertEqual(try target(["PARLEY_HOST": "127.0.0.1", "PARLEY_PORT": "9000"]).url,
                       "http://127.0.0.1:9000/api/health")
        // Off loopback with a host list, a bare address would get 421: the check names an allowed host.
        let listed = try target(["PARLEY_HOST": "0.0.0.0", "PARLEY_ALLOWED_HOSTS": "chat.example.org"])
        XCTAssertEqual(listed.host, "chat.example.org")
    }

    private struct NotAHealthCheck: Error {
        let command: String
    }
}
