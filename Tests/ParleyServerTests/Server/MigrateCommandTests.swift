import Foundation
import ParleyCLI
import ParleyStore
import XCTest

/// `parley migrate`'s command line (no server needed): its operands, bad use on one line that never
/// repeats a password, and a missing source refused before any connection. The copy itself is tested
/// against a real PostgreSQL in ParleyStoreTests (StoreMigrationTests).
final class MigrateCommandTests: XCTestCase {
    private func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws -> ParleyCommand {
        try ParleyCommand(environment: environment, arguments: arguments)
    }

    func testFromAndToInEitherFormAndOrder() throws {
        guard case .migrate(let command) = try parse(
            ["migrate", "--to", "postgres://parley:secret@db:5432/parley", "--from=sqlite:/data/parley.sqlite"])
        else { return XCTFail() }
        XCTAssertEqual(command.source, "/data/parley.sqlite")
        XCTAssertEqual(command.target.url, "postgres://parley:secret@db:5432/parley")
        guard case .migrate(let relative) = try parse(
            ["migrate", "--from", "sqlite:parley.sqlite", "--to=postgresql://db/parley"])
        else { return XCTFail() }
        XCTAssertEqual(relative.source, "parley.sqlite")
        XCTAssertEqual(relative.target.url, "postgresql://db/parley")
    }

    func testToDefaultsToTheDatabaseURLAndTheFlagWins() throws {
        let environment = ["PARLEY_DATABASE_URL": "postgres://env/parley"]
        guard case .migrate(let fromEnvironment) = try parse(["migrate", "--from", "sqlite:a.sqlite"], environment)
        else { return XCTFail() }
        XCTAssertEqual(fromEnvironment.target.url, "postgres://env/parley")
        guard case .migrate(let fromFlag) = try parse(
            ["migrate", "--from", "sqlite:a.sqlite", "--to", "postgres://flag/parley"], environment)
        else { return XCTFail() }
        XCTAssertEqual(fromFlag.target.url, "postgres://flag/parley")
    }

    func testBadUseIsOneLineThatNeverShowsThePassword() {
        let url = "postgres://parley:hunter2@db/parley"
        let cases: [[String]] = [
            ["migrate"],
            ["migrate", "--to", url],
            ["migrate", "--from", "/data/parley.sqlite", "--to", url],
            ["migrate", "--from", "sqlite:", "--to", url],
            ["migrate", "--from", "sqlite:a", "--from", "sqlite:b", "--to", url],
            ["migrate", "--from", "sqlite:a", "--to", "mysql://parley:hunter2@db/parley"],
            ["migrate", "--from", "sqlite:a", "--to"],
            ["migrate", "--from", "sqlite:a", url],
            ["migrate", "--from", "sqlite:a", "--to", url, "--force"],
            ["migrate", "--from", "sqlite:a", "--to", url, "--db", "x.sqlite"],
        ]
        for arguments in cases {
            XCTAssertThrowsError(try parse(arguments), "\(arguments)") { error in
                XCTAssertFalse("\(error)".contains("\n"), "one line: \(error)")
                XCTAssertFalse("\(error)".contains("hunter2"), "no password: \(error)")
                XCTAssertTrue("\(error)".contains("usage: parley migrate"), "\(error)")
            }
        }
    }

    func testAMissingSourceIsBadUseNamingTheFileAndNeverThePassword() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("parley-\(UUID().uuidString).sqlite").path
        // Port 1 on loopback: were a connection tried, it would fail differently (status 1).
        let command = try XCTUnwrap(PostgresLocation(url: "postgres://parley:hunter2@127.0.0.1:1/parley"))
        guard case .migrate(let migrate) = try parse(["migrate", "--from", "sqlite:" + missing, "--to", command.url])
        else { return XCTFail() }
        let (status, lines) = migrate.run()
        XCTAssertEqual(status, 2)
        XCTAssertEqual(lines.count, 1)
        XCTAssertTrue(lines[0].contains(missing), lines[0])
        XCTAssertTrue(lines[0].contains("postgres://parley:***@127.0.0.1:1/parley"), lines[0])
        XCTAssertFalse(lines[0].contains("hunter2"), lines[0])
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing), "no empty SQLite file was made")
    }

    func testAnUnreachableTargetIsAFailureWithoutThePassword() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("parley.sqlite").path
        _ = try Store(path: source)
        guard case .migrate(let migrate) = try parse(
            ["migrate", "--from", "sqlite:" + source, "--to", "postgres://parley:hunter2@127.0.0.1:1/parley"])
        else { return XCTFail() }
        let (status, lines) = migrate.run()
        XCTAssertEqual(status, 1, "\(lines)")
        XCTAssertFalse(lines.joined().contains("hunter2"), "\(lines)")
        XCTAssertTrue(lines.joined().contains("the same command can run again"), "\(lines)")
    }
}
