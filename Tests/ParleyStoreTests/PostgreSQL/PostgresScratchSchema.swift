import Foundation
@testable import ParleyStore
import XCTest

/// A fresh schema in the PostgreSQL database of `PARLEY_TEST_POSTGRES_URL` (tests skip without it),
/// driven through `psql`, dropped by `drop()`. Until the libpq connection is on main, migrations run
/// here as psql scripts with the same statements, in the same transactions and under the same lock
/// as `PostgresMigration.migrate`.
struct PostgresScratchSchema {
    let url: String
    let name: String

    /// The psql client Debian's postgresql-client installs.
    static let psql = "/usr/bin/psql"

    /// A new empty schema; skips the test when no PostgreSQL is configured.
    static func make() throws -> PostgresScratchSchema {
        guard let url = ProcessInfo.processInfo.environment["PARLEY_TEST_POSTGRES_URL"], !url.isEmpty else {
            throw XCTSkip("PARLEY_TEST_POSTGRES_URL is not set")
        }
        let schema = PostgresScratchSchema(url: url, name: "parley_test_\(UUID().uuidString.prefix(8).lowercased())")
        _ = try schema.run("CREATE SCHEMA \(schema.name);", inSchema: false)
        return schema
    }

    func drop() {
        _ = try? run("DROP SCHEMA \(name) CASCADE;", inSchema: false)
    }

    /// Runs `script` in one psql session (stopping at the first error, which throws); returns the rows
    /// printed, one per line, columns separated by tabs.
    @discardableResult
    func run(_ script: String, inSchema: Bool = true) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.psql)
        process.arguments = [url, "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1"]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let prefix = inSchema ? "SET client_min_messages = warning;\nSET search_path TO \(name);\n" : ""
        input.fileHandleForWriting.write(Data((prefix + script + "\n").utf8))
        try input.fileHandleForWriting.close()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let complaint = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw StoreError.corrupt("psql: \(String(decoding: complaint, as: UTF8.self))")
        }
        return String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    /// The psql script of one `PostgresMigration.migrate` step for `migration`: lock, the table of
    /// versions, the version check, the step and its row, in one transaction.
    static func stepScript(_ migration: PostgresMigration) -> String {
        """
        BEGIN;
        SELECT pg_advisory_xact_lock(\(PostgresMigration.lockKey)) \\g /dev/null
        \(PostgresMigration.createTable);
        SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = \(migration.version)) AS done \\gset
        \\if :done
        \\else
        \(migration.sql)
        INSERT INTO schema_migrations (version, name) VALUES (\(migration.version), '\(migration.name)');
        \\endif
        COMMIT;
        """
    }

    /// Applies every step, as `PostgresMigration.migrate` does.
    func migrate() throws {
        try run(PostgresMigration.all.map(Self.stepScript).joined(separator: "\n"))
    }

    /// A libpq connection whose tables are this schema's; with `indexingSearch`, its write
    /// transactions index the search documents queued in them, as the store's writer does.
    func connect(indexingSearch: Bool = false) throws -> PostgresDatabase {
        let separator = url.contains("?") ? "&" : "?"
        let database = try PostgresDatabase(url: url + separator + "options=-csearch_path%3D\(name)",
                                            applicationName: "parley-tests")
        database.searchIndexer = indexingSearch ? PostgresSearchIndexer() : nil
        return database
    }

    /// Indexes the search documents the triggers queued (what a store write does before its commit).
    func indexQueuedSearchDocuments() throws {
        let database = try connect(indexingSearch: true)
        try database.transaction(.immediate) {}
    }

    /// A text literal for a psql script (dollar-quoted with a tag test texts never hold).
    static func literal(_ text: String?) -> String {
        text.map { "$parley$\($0)$parley$" } ?? "NULL"
    }
}
