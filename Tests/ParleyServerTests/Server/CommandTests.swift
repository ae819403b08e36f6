import Foundation
import ParleyTestSupport
import XCTest

/// The `parley` commands beside `serve`, run as real processes: `healthcheck` (Docker's HEALTHCHECK),
/// `backup FILE` beside a running server, and the start-up error for a database it cannot open.
final class CommandTests: XCTestCase {
    var directory: URL!

    override func setUp() {
        directory = TestFiles.directory("parley-command")
    }

    private var databasePath: String { directory.appendingPathComponent("parley.db").path }

    private func settings(_ extra: [String: String] = [:]) -> [String: String] {
        ["PARLEY_PORT": "0", "PARLEY_DB": databasePath, "PARLEY_DEMO_TOKENS_PER_SECOND": "0",
         "PARLEY_PUBLIC": TestParley.repositoryRoot.appendingPathComponent("Public").path].merging(extra) { $1 }
    }

    /// Runs `parley ARGUMENTS` to its end (killed after `timeout`); its exit status and output.
    private func parley(_ arguments: [String], _ environment: [String: String], timeout: TimeInterval = 20,
                        input: String? = nil) throws -> (status: Int32, output: String, errors: String) {
        let process = try SpawnedProcess(executable: ParleyProcess.executable, arguments: arguments,
                                       environment: ParleyProcess.environment(environment),
                                       standardInput: Data((input ?? "").utf8))
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            XCTFail("parley \(arguments) did not finish within \(timeout) s")
        }
        process.waitUntilExit()
        return (process.terminationStatus,
                String(decoding: process.standardOutput.readDataToEndOfFile(), as: UTF8.self),
                String(decoding: process.standardError.readDataToEndOfFile(), as: UTF8.self))
    }

    private func port(_ server: ParleyProcess) throws -> String {
        try XCTUnwrap(server.base.split(separator: ":").last.map(String.init))
    }

    private func post(_ url: String, _ json: [String: Any]) throws -> [String: Any] {
        let response = try TestHTTPClient().request("POST", url, headers: [("Content-Type", "application/json")],
                                                    body: Array(try JSONSerialization.data(withJSONObject: json)))
        return (try JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    // MARK: - user

    func testUserAddMakesAnAdminWhoCanSignInToTeamMode() throws {
        let fast = settings(["PARLEY_PASSWORD_MEMORY_KIB": "64"])
        let added = try parley(["user", "add", "ada", "--admin"], fast, input: "a long passphrase\n")
        XCTAssertEqual(added.status, 0, added.errors)
        XCTAssertEqual(added.output, "added ada (admin)\n")
        XCTAssertFalse(added.errors.contains("a long passphrase"), "the password is never logged")
        let listed = try parley(["user", "list"], fast)
        XCTAssertEqual(listed.output, "ada\tadmin\n")
        let taken = try parley(["user", "add", "ADA"], fast, input: "another passphrase\n")
        XCTAssertEqual(taken.status, 2, "a taken name is bad use: \(taken.errors)")
        XCTAssertEqual(try parley(["user", "frob", "x"], fast).status, 2)

        // The admin exists, so team mode starts without PARLEY_ADMIN_USER and lets them in.
        let server = try ParleyProcess(environment: fast.merging(["PARLEY_AUTH": "on"]) { $1 })
        defer { server.stop() }
        let signedIn = try post(server.base + "/api/auth/login", ["username": "ada", "password": "a long passphrase"])
        XCTAssertEqual((signedIn["user"] as? [String: Any])?["role"] as? String, "admin", "\(signedIn)")
    }

    func testTeamModeWithoutAnAdminExitsTwoAndSaysHow() throws {
        let refused = try parley([], settings(["PARLEY_AUTH": "on"]))
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.errors.contains("parley user add"), refused.errors)
        XCTAssertEqual(refused.errors.split(separator: "\n").filter { $0.hasPrefix("parley:") }.count, 1,
                       "one line: \(refused.errors)")
    }

    // MARK: - healthcheck

    func testHealthcheckExitsZeroAgainstARunningServerAndNonZeroAgainstAClosedPort() throws {
        let server = try ParleyProcess(environment: settings())
        let port = try port(server)
        let healthy = try parley(["healthcheck"], ["PARLEY_PORT": port])
        XCTAssertEqual(healthy.status, 0, healthy.errors)
        // As in the image: bound to every address, the check asks loopback.
        XCTAssertEqual(try parley(["healthcheck", "--port", port, "--host", "0.0.0.0"], [:]).status, 0)
        server.kill(SIGTERM)

        let closed = try parley(["healthcheck"], ["PARLEY_PORT": port], timeout: 10)
        XCTAssertNotEqual(closed.status, 0)
        XCTAssertTrue(closed.errors.contains("unhealthy"), closed.errors)
        XCTAssertTrue(closed.errors.contains(":\(port)/api/health"), closed.errors)
    }

    // MARK: - backup

    func testBackupBesideARunningServerIsACompleteDatabase() throws {
        let server = try ParleyProcess(environment: settings())
        defer { server.kill(SIGTERM) }
        var titles: [String: String] = [:]
        for index in 0..<20 {
            let conversation = try post(server.base + "/api/conversations", ["title": "backup \(index)"])
            let id = try XCTUnwrap(conversation["id"] as? String)
            titles[id] = "backup \(index)"
            _ = try post(server.base + "/api/conversations/\(id)/messages", ["content": "hello \(index)"])
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: databasePath + "-wal"), "the server holds a WAL")

        let copy = directory.appendingPathComponent("copy.db").path
        let backup = try parley(["backup", copy], ["PARLEY_DB": databasePath])
        XCTAssertEqual(backup.status, 0, backup.errors)
        XCTAssertTrue(backup.output.contains(copy), backup.output)
        // The files database beside it is copied too, beside the copy.
        let filesCopy = directory.appendingPathComponent("copy.files.sqlite").path
        XCTAssertTrue(backup.output.contains(filesCopy), backup.output)
        XCTAssertTrue(FileManager.default.fileExists(atPath: filesCopy))

        // The copy alone (no -wal beside it) serves every conversation.
        XCTAssertFalse(FileManager.default.fileExists(atPath: copy + "-wal"))
        let restored = try ParleyProcess(environment: settings(["PARLEY_DB": copy]))
        defer { restored.kill(SIGTERM) }
        for (id, title) in titles {
            let response = try TestHTTPClient().request("GET", restored.base + "/api/conversations/\(id)")
            let json = (try JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(json["title"] as? String, title)
        }

        // An existing file is kept unless --force; bad use is exit 2 with one line.
        let again = try parley(["backup", copy], ["PARLEY_DB": databasePath])
        XCTAssertEqual(again.status, 2)
        XCTAssertTrue(again.errors.contains("--force"), again.errors)
        XCTAssertEqual(again.errors.split(separator: "\n").count, 1, again.errors)
        XCTAssertEqual(try parley(["backup", "--force", copy, "--db", databasePath], [:]).status, 0)
        let noFile = try parley(["backup"], ["PARLEY_DB": databasePath])
        XCTAssertEqual(noFile.status, 2)
        XCTAssertEqual(noFile.errors.split(separator: "\n").count, 1, noFile.errors)
        XCTAssertEqual(try parley(["backup", "a.db", "b.db"], [:]).status, 2)
        XCTAssertEqual(try parley(["no-such-command"], [:]).status, 2)
    }

    func testBackupOfAMissingDatabaseFailsNamingItAndCreatesNothing() throws {
        let missing = directory.appendingPathComponent("missing.db").path
        let copy = directory.appendingPathComponent("copy.db").path
        let result = try parley(["backup", copy], ["PARLEY_DB": missing])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.errors.contains(missing), result.errors)
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing))
        XCTAssertFalse(FileManager.default.fileExists(atPath: copy))
    }

    // MARK: - Start-up errors

    /// A volume the user cannot write (here: a folder that does not exist) is named in the error.
    func testADatabaseThatCannotBeOpenedIsNamedInTheStartupError() throws {
        let path = directory.appendingPathComponent("no/such/folder/parley.db").path
        let result = try parley([], settings(["PARLEY_DB": path]))
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.output, "", "no listening line")
        XCTAssertTrue(result.errors.contains("cannot open the database \(path)"), result.errors)
        XCTAssertTrue(result.errors.contains("uid \(getuid())"), result.errors)
    }
}
