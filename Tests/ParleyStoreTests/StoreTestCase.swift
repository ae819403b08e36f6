import Foundation
@testable import ParleyStore
import Synchronization
import XCTest

/// Base for store tests: a fresh store per test, on the engine `PARLEY_TEST_STORE_ENGINE` names.
///
/// - `sqlite` (or unset): real SQLite files in a fresh temporary directory.
/// - `postgres`: a fresh database of its own on the PostgreSQL server `PARLEY_TEST_POSTGRES_URL` names (the
///   role needs CREATEDB; `make test` starts one with scripts/postgres-test-server.sh), dropped after
///   the test. Without the URL the test fails: asking for PostgreSQL and silently testing SQLite
///   would be a run that cannot fail.
/// `makeStore()` called twice opens the same database again (a restart).
class StoreTestCase: XCTestCase {
    private(set) var directory: URL!
    /// The test's own PostgreSQL database (its URL), when the engine is PostgreSQL.
    private(set) var postgresURL: String?
    private var postgresName: String?

    var databasePath: String { directory.appendingPathComponent("parley.sqlite").path }

    /// Whether this run tests the PostgreSQL store.
    static var onPostgres: Bool {
        ProcessInfo.processInfo.environment["PARLEY_TEST_STORE_ENGINE"] == "postgres"
    }

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("parley-store-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard Self.onPostgres else { return }
        let server = try XCTUnwrap(ProcessInfo.processInfo.environment["PARLEY_TEST_POSTGRES_URL"],
                                   "PARLEY_TEST_STORE_ENGINE=postgres needs PARLEY_TEST_POSTGRES_URL")
        let name = "parley_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        let admin = try PostgresDatabase(url: server, applicationName: "parley-tests")
        try admin.execute("CREATE DATABASE \(name)")
        postgresName = name
        postgresURL = try Self.url(server, database: name)
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        if let postgresName, let server = ProcessInfo.processInfo.environment["PARLEY_TEST_POSTGRES_URL"] {
            let admin = try PostgresDatabase(url: server, applicationName: "parley-tests")
            try admin.execute("DROP DATABASE IF EXISTS \(postgresName) WITH (FORCE)")
        }
    }

    func makeStore(
        configuration: StoreConfiguration = StoreConfiguration(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> Store {
        if let postgresURL {
            return try Store(postgres: try XCTUnwrap(PostgresLocation(url: postgresURL)),
                             configuration: configuration, now: now)
        }
        return try Store(path: databasePath, configuration: configuration, now: now)
    }

    /// A connection of the test's engine to the test's database, for writing rows the store would not.
    func rawConnection() throws -> any Database {
        if let postgresURL { return try PostgresDatabase(url: postgresURL, applicationName: "parley-tests") }
        return try SQLiteDatabase(path: databasePath, readOnly: false, busyTimeoutMilliseconds: 1000)
    }

    /// Skips a test of SQLite's own machinery (its files, WAL, checkpoints, backups) on PostgreSQL.
    func requireSQLite(_ why: String = "tests SQLite's own files") throws {
        if Self.onPostgres { throw XCTSkip("SQLite only: \(why)") }
    }

    /// `server` with its database replaced by `database`.
    private static func url(_ server: String, database: String) throws -> String {
        var components = try XCTUnwrap(URLComponents(string: server), "PARLEY_TEST_POSTGRES_URL is not a URL")
        components.path = "/" + database
        return try XCTUnwrap(components.string)
    }
}

/// A clock tests set by hand, to make timestamps equal or ordered on purpose.
final class ManualClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        current = Mutex(start)
    }

    func now() -> Date { current.withLock { $0 } }

    func advance(milliseconds: Int) {
        current.withLock { $0 += Double(milliseconds) / 1000 }
    }
}
