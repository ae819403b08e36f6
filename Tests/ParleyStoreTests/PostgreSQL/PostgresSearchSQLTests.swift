import Foundation
@testable import ParleyStore
import XCTest

/// PostgreSQL's search (`PostgresSearchQuery`, `PostgresSearchSQL`, migration 3) against SQLite's
/// FTS5 on the trigram tokenizer, query by query: the same queries refused, the same rows found (on
/// a real PostgreSQL, `PARLEY_TEST_POSTGRES_URL`), and the same counts for BM25.
final class PostgresSearchSQLTests: StoreTestCase {
    static let bodies = [
        "the quick brown fox", "brown quick", "abcdef", "say \"hi\" there", "x quick a b c d e f g h i j k l m fox",
        "naïve café au lait", "東京タワーは高い", "x_y fox*bar", "aaaaa", "The lazy dog and a cat", "lazy dog",
        "When do tomatoes ripen?", "Tomato festival trip",
    ]

    /// The queries of SearchTests, and each corner of FTS5's syntax (checked on SQLite 3.40).
    static let queries = [
        "tomato", "\"quick brown\"", "qui*", "NEAR(quick fox)", "東京タワー", "café", "CAFÉ", "fox AND 東京", "qu*",
        "quick*", "\"abcd\" + \"cdef\"", "abcd + cdef", "abc + def", "NEAR(quick fox, 5)", "NEAR(quick fox, 0)",
        "NEAR(fox quick)", "^the", "^quick", "body:fox", "-body:fox", "{body}:fox", "Quick", "NEAR", "near", "caf",
        "fox OR 東京", "a OR fox", "(fox)", "fox NOT brown", "quick fox OR abc", "fox-bar", "fox.bar", "fox bar:",
        "\"fox\" \"quick\"", "fox, quick", "NEAR(quick fox, 10) OR ^lazy AND dog NOT cat", "x* + y", "", "AND",
        "fox OR", "()", "NEAR(fox)", "NEAR(quick fox, x)", "NEAR(quick, fox)", "NEAR (quick fox)",
        "\"say \"\"hi\"\"\"", "fox*bar", "*", "fox * quick", "^\"quick brown\"", "body : fox", "{body nosuch}: fox",
        "\"fox\" + ", "NOT", "fox AND OR quick", "BODY:fox", "fox OR (brown NOT quick)", "- body: fox",
        "-{body}:fox", "x_y", "fox AND NOT quick", "^ fox", "fox ^", "(fox", "fox)", "NEAR(quick fox,)", "'fox'",
        "fox:", "\"quick\" + \"brown\"", "ick + ick", "quick+ brown", "a:b:c", "^quick*", "fo* + x", "+fox", "(abc",
        "\"unterminated", "NOT fox", "nosuchcolumn:fox", "aaa", "\"aaaa\" + \"aaa\"", "lazy NOT cat", "ripen OR trip",
    ]

    /// FTS5 with SQLite's own trigram tokenizer (the owner prefix aside, what `parley_owned` indexes).
    private func fts5() throws -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: databasePath, readOnly: false, busyTimeoutMilliseconds: 5000)
        try database.execute("CREATE VIRTUAL TABLE t USING fts5 (body, tokenize = 'trigram')")
        for (index, body) in Self.bodies.enumerated() {
            try database.run("INSERT INTO t (rowid, body) VALUES (?, ?)", [.integer(Int64(index + 1)), .text(body)])
        }
        return database
    }

    /// FTS5's rows for `query` with their counts, or nil when FTS5 refuses it.
    private func fts5Matches(_ database: SQLiteDatabase, _ query: String) -> [(row: Int64, counts: String)]? {
        try? database.query("SELECT rowid, parley_match_counts(t) FROM t WHERE t MATCH ? ORDER BY rowid",
                            [.text(query)]) { row in (row.int64(0), row.text(1)) }
    }

    func testRefusesWhatFTS5RefusesAndCountsAsItCounts() throws {
        let database = try fts5()
        for query in Self.queries {
            let matches = fts5Matches(database, query)
            let parsed: PostgresSearchQuery
            do {
                parsed = try PostgresSearchQuery(query)
            } catch {
                guard case StoreError.invalidQuery = error else { return XCTFail("\(query): \(error)") }
                XCTAssertNil(matches, "FTS5 accepts \(query)")
                continue
            }
            guard let matches else {
                XCTFail("FTS5 refuses \(query)")
                continue
            }
            for match in matches {
                XCTAssertEqual(parsed.counts(in: Self.bodies[Int(match.row) - 1]), MatchCounts(match.counts),
                               "\(query) on row \(match.row)")
            }
        }
    }

    func testFindsTheRowsFTS5Finds() throws {
        let schema = try PostgresScratchSchema.make()
        defer { schema.drop() }
        try schema.migrate()
        var rows = """
            INSERT INTO conversations (id, title, created_at, updated_at, owner_id) VALUES ('c', 'c', 1, 1, 'alice');
            INSERT INTO conversations (id, title, created_at, updated_at, owner_id) VALUES ('o', 'o', 1, 1, 'bob');

            """
        for (index, body) in Self.bodies.enumerated() {
            for (conversation, prefix) in [("c", "m"), ("o", "other")] {
                rows += """
                    INSERT INTO messages (id, conversation_id, role, content, status, created_at, updated_at)
                    VALUES ('\(prefix)\(index + 1)', '\(conversation)', 'user', \(PostgresScratchSchema.literal(body)),
                            'complete', \(index), \(index));

                    """
            }
        }
        try schema.run(rows)
        try schema.indexQueuedSearchDocuments()
        let database = try fts5()
        var script = ""
        var expected: [String] = []
        for query in Self.queries {
            guard let matches = fts5Matches(database, query), let parsed = try? PostgresSearchQuery(query) else { continue }
            let condition = PostgresSearchSQL.condition(for: parsed)
            let arguments: [SQLValue] = [.text(query), .text("alice"), .null, .null, .integer(100)] + condition.arguments
            let values = arguments.map(Self.literal).joined(separator: ", ")
            script += """
                PREPARE q AS \(Self.numbered(PostgresSearchSQL.matchSQL(condition: condition.sql)));
                CREATE TEMP TABLE found AS EXECUTE q(\(values));
                SELECT '[' || coalesce(string_agg(message_id, ' ' ORDER BY doc_id), '') || ']' FROM found;
                DROP TABLE found;
                DEALLOCATE q;

                """
            expected.append("[" + matches.map { "m\($0.row)" }.joined(separator: " ") + "]")
        }
        let found = try schema.run(script).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let answered = Self.queries.filter { query in
            fts5Matches(database, query) != nil && (try? PostgresSearchQuery(query)) != nil
        }
        XCTAssertGreaterThan(expected.filter { $0 != "[]" }.count, 30, "most queries find rows")
        XCTAssertEqual(found.count, expected.count)
        for (index, query) in answered.enumerated() where index < found.count {
            XCTAssertEqual(found[index], expected[index], query)
        }
    }

    /// `?N` as `$N` (the store's connection does this; these statements hold no `?` in a literal).
    private static func numbered(_ sql: String) -> String {
        sql.replacingOccurrences(of: "?", with: "$")
    }

    private static func literal(_ value: SQLValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let number): "\(number)"
        case .real(let number): "\(number)"
        case .text(let text): PostgresScratchSchema.literal(text)
        case .blob(let bytes): "'\\x\(bytes.map { String(format: "%02x", $0) }.joined())'::BYTEA"
        }
    }
}
