import Foundation
@testable import ParleyStore
import XCTest

/// The PostgreSQL schema (`PostgresMigration`) against a real PostgreSQL 15 (`PARLEY_TEST_POSTGRES_URL`,
/// as a database owner, not a superuser): it applies once, its tables and columns are SQLite's, three
/// nodes migrating at once apply each step once, and its triggers count usage as SQLite's do.
final class PostgresMigrationTests: StoreTestCase {
    func testStepsAreNumberedInOrderAndNamedOnce() {
        let versions = PostgresMigration.all.map(\.version)
        XCTAssertEqual(versions, Array(1...Int64(versions.count)))
        XCTAssertEqual(Set(PostgresMigration.all.map(\.name)).count, versions.count)
    }

    func testAppliesOnceAndAgainAppliesNothing() throws {
        let schema = try PostgresScratchSchema.make()
        defer { schema.drop() }
        try schema.migrate()
        let first = try schema.run("SELECT version, applied_at FROM schema_migrations ORDER BY version")
        try schema.migrate()
        XCTAssertEqual(try schema.run("SELECT version, applied_at FROM schema_migrations ORDER BY version"), first)
        XCTAssertEqual(first.split(separator: "\n").count, PostgresMigration.all.count)
        XCTAssertEqual(try schema.run("SELECT count(*) FROM pg_extension WHERE extname <> 'plpgsql'"), "0",
                       "no extension needed")
    }

    func testThreeNodesMigratingAtOnceApplyEachStepOnce() throws {
        let schema = try PostgresScratchSchema.make()
        defer { schema.drop() }
        let failures = LockedFailures()
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            do { try schema.migrate() } catch { failures.add("\(error)") }
        }
        XCTAssertEqual(failures.all, [])
        XCTAssertEqual(try schema.run("SELECT count(*), count(DISTINCT version) FROM schema_migrations"),
                       "\(PostgresMigration.all.count)\t\(PostgresMigration.all.count)")
    }

    /// Every table of SQLite's main database has its columns here, in the same order, of the matching type and nullability. PostgreSQL has more
    /// only where SQLite's is implicit (`users.rowid`), parsed once (`messages.usage_json`) or inside
    /// FTS5 (`search_index`'s doc id and trigrams, and `body` NOT NULL).
    func testTablesAndColumnsAreSQLites() throws {
        let schema = try PostgresScratchSchema.make()
        defer { schema.drop() }
        try schema.migrate()
        _ = try Store(path: databasePath)  // SQLite's schema, to compare with, whatever engine the run tests
        var sqlite = try columns(ofSQLiteAt: databasePath, skipping: ["search_index_"])
        // The files database's `blobs` is PostgresBlobs' two tables here, chunked.
        XCTAssertEqual(Set(try columns(ofSQLiteAt: FileBlobs.path(forDatabaseAt: databasePath), skipping: []).keys), ["blobs"])
        sqlite["blob_files"] = [Column(name: "id", type: "INTEGER", notNull: true), Column(name: "size", type: "INTEGER", notNull: true),
                                Column(name: "chunk_size", type: "INTEGER", notNull: true),
                                Column(name: "thumbnail", type: "BLOB", notNull: false), Column(name: "text", type: "BLOB", notNull: false)]
        sqlite["blob_chunks"] = [Column(name: "blob_id", type: "INTEGER", notNull: true), Column(name: "seq", type: "INTEGER", notNull: true),
                                 Column(name: "bytes", type: "BLOB", notNull: true)]
        let postgres = try schema.run("""
            SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name <> 'schema_migrations'
            ORDER BY table_name, ordinal_position
            """)
        var tables: [String: [Column]] = [:]
        for line in postgres.split(separator: "\n") {
            let field = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            tables[field[0], default: []].append(
                Column(name: field[1], type: Self.sqliteType(ofPostgres: field[2]), notNull: field[3] == "NO"))
        }
        tables["users"]?.removeAll { $0.name == "rowid" }
        tables["messages"]?.removeAll { $0.name == "usage_json" }
        tables["search_index"]?.removeAll { $0.name == "doc_id" || $0.name == "trigrams" }
        // The queue of documents whose trigrams the writer makes (migration 6): FTS5 indexes in its trigger.
        XCTAssertEqual(tables.removeValue(forKey: "search_pending"),
                       [Column(name: "doc_id", type: "INTEGER", notNull: true), Column(name: "owner_id", type: "TEXT", notNull: true),
                        Column(name: "body", type: "TEXT", notNull: true)])
        // FTS5's columns are untyped and nullable; the indexed copy is never NULL here.
        sqlite["search_index"] = sqlite["search_index"]?.map { Column(name: $0.name, type: $0.type, notNull: true) }
        XCTAssertEqual(Set(tables.keys), Set(sqlite.keys))
        for (table, expected) in sqlite {
            XCTAssertEqual(tables[table], expected, table)
        }
    }

    /// A reply finishing with no usage, half a usage, a whole one and text that is not JSON: the
    /// stored usage (as JSON) and the three counters come out as SQLite's triggers make them.
    func testUsageTriggersCountAsSQLites() throws {
        let schema = try PostgresScratchSchema.make()
        defer { schema.drop() }
        try schema.migrate()
        _ = try Store(path: databasePath)  // SQLite's schema, to compare with, whatever engine the run tests
        let sqlite = try SQLiteDatabase(path: databasePath, readOnly: false, busyTimeoutMilliseconds: 5000)
        let usages: [String?] = [nil, #"{"output_tokens": 2, "cached": 1}"#, #"{"input_tokens": 7, "output_tokens": 9}"#,
                                 "not json", #"{"input_tokens": 3000000000, "output_tokens": -4}"#, "[1]"]
        var script = """
            INSERT INTO conversations (id, title, system_prompt, created_at, updated_at, owner_id)
            VALUES ('c1', 'Garden', 'be brief', 1, 1, 'alice');
            INSERT INTO messages (id, conversation_id, parent_id, role, content, status, created_at, updated_at)
            VALUES ('u1', 'c1', NULL, 'user', 'When do tomatoes ripen? 東京', 'complete', 2, 2);
            """
        for (index, usage) in usages.enumerated() {
            script += """
                INSERT INTO messages (id, conversation_id, parent_id, role, content, status, created_at, updated_at, usage)
                VALUES ('a\(index)', 'c1', 'u1', 'assistant', '', 'streaming', \(10 + index), \(10 + index), \
                \(PostgresScratchSchema.literal(usage)));
                UPDATE messages SET content = 'Tomatoes ripen in August, 東京タワー \(index)', status = 'complete',
                    updated_at = \(86_400_000 * Int64(index % 2) + 20) WHERE id = 'a\(index)';

                """
        }
        try sqlite.execute(script.replacingOccurrences(of: "$parley$", with: "'"))
        try schema.run(script)
        let readUsage = "SELECT id, usage FROM messages WHERE role = 'assistant' ORDER BY id"
        let sqliteUsage = try sqlite.query(readUsage) { row in "\(row.text(0)) \(Self.json(row.optionalText(1)))" }
        let postgresUsage = try schema.run(readUsage).split(separator: "\n").map { line in
            let field = line.split(separator: "\t", maxSplits: 1).map(String.init)
            return "\(field[0]) \(Self.json(field.count > 1 ? field[1] : nil))"
        }
        XCTAssertEqual(postgresUsage, sqliteUsage)
        let counters = [
            ("SELECT user_id, day, model, input_tokens, output_tokens, replies, estimated_replies FROM usage_daily ORDER BY day", 7),
            ("SELECT conversation_id, input_tokens, output_tokens, replies, estimated_replies FROM conversation_usage", 5),
            ("SELECT user_id, day, output_tokens FROM daily_output ORDER BY day", 3),
        ]
        for (counter, width) in counters {
            let fromSQLite = try sqlite.query(counter) { row in
                (0..<Int32(width)).map { column in row.text(column) }.joined(separator: "\t")
            }
            XCTAssertEqual(try schema.run(counter).split(separator: "\n").map(String.init), fromSQLite, counter)
        }
    }

    // MARK: - Helpers

    private struct Column: Equatable, CustomStringConvertible {
        let name: String
        let type: String
        let notNull: Bool
        var description: String { "\(name) \(type)\(notNull ? " NOT NULL" : "")" }
    }

    private static func sqliteType(ofPostgres type: String) -> String {
        switch type {
        case "bigint": "INTEGER"
        case "double precision": "REAL"
        case "bytea": "BLOB"
        case "text": "TEXT"
        default: type
        }
    }

    /// PRAGMA table_info of every ordinary table (FTS5's `search_index` itself, not its shadow tables).
    private func columns(ofSQLiteAt path: String, skipping prefixes: [String]) throws -> [String: [Column]] {
        let database = try SQLiteDatabase(path: path, readOnly: true, busyTimeoutMilliseconds: 5000)
        let names = try database.query(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name") { $0.text(0) }
        var tables: [String: [Column]] = [:]
        for name in names where !prefixes.contains(where: name.hasPrefix) {
            tables[name] = try database.query("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)", [.text(name)]) { row in
                // An INTEGER PRIMARY KEY is the rowid: never NULL, whatever its declaration says.
                Column(name: row.text(0), type: row.text(1).isEmpty ? "TEXT" : row.text(1),
                       notNull: row.int64(2) == 1 || (row.int64(3) == 1 && row.text(1) == "INTEGER"))
            }
        }
        return tables
    }

    /// A usage text as canonical JSON (sorted keys), or the text itself when it is not JSON.
    private static func json(_ text: String?) -> String {
        guard let text else { return "NULL" }
        guard let value = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) else {
            return text
        }
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) else {
            return text
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Errors gathered from concurrent work.
private final class LockedFailures: @unchecked Sendable {
    private let lock = NSLock()
    private var failures: [String] = []

    func add(_ failure: String) { lock.withLock { failures.append(failure) } }
    var all: [String] { lock.withLock { failures } }
}
