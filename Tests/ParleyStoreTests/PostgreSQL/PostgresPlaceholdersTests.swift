@testable import ParleyStore
import XCTest

/// SQLite's placeholders rewritten for PostgreSQL (no server needed): numbering as SQLite numbers
/// them, and nothing rewritten inside quoted text or comments.
final class PostgresPlaceholdersTests: XCTestCase {
    private func rewrite(_ sql: String) -> PostgresPlaceholders { PostgresPlaceholders(rewriting: sql) }

    func testBarePlaceholdersAreNumberedInOrder() {
        let rewritten = rewrite("INSERT INTO t (a, b, c) VALUES (?, ?, ?)")
        XCTAssertEqual(rewritten.sql, "INSERT INTO t (a, b, c) VALUES ($1, $2, $3)")
        XCTAssertEqual(rewritten.parameterCount, 3)
    }

    func testNumberedPlaceholdersKeepTheirNumberAndBareOnesFollowTheLargest() {
        // SQLite: a bare ? is one more than the largest number assigned so far.
        let rewritten = rewrite("SELECT ?2, ?1, ?, ?10,?")
        XCTAssertEqual(rewritten.sql, "SELECT $2, $1, $3, $10,$11")
        XCTAssertEqual(rewritten.parameterCount, 11)
    }

    func testQuotedTextAndCommentsAreLeftAlone() {
        let sql = """
            SELECT '?', 'it''s ?', "col?", E'\\'?', ? -- a ? here
            , /* ? /* nested ? */ ? */ ?, $$ ? $$, $tag$ ?$ ? $tag$, ?::bigint
            """
        let rewritten = rewrite(sql)
        XCTAssertEqual(rewritten.sql, """
            SELECT '?', 'it''s ?', "col?", E'\\'?', $1 -- a ? here
            , /* ? /* nested ? */ ? */ $2, $$ ? $$, $tag$ ?$ ? $tag$, $3::bigint
            """)
        XCTAssertEqual(rewritten.parameterCount, 3)
    }

    func testPostgresParametersAndIdentifiersWithDollarsAreNotQuotes() {
        XCTAssertEqual(rewrite("SELECT $1, a$b, ?").sql, "SELECT $1, a$b, $1")
        XCTAssertEqual(rewrite("SELECT 'e' || 'x?', ?").sql, "SELECT 'e' || 'x?', $1")
    }

    func testUnterminatedQuotesAndNonASCIITextSurvive() {
        XCTAssertEqual(rewrite("SELECT 'émoji 😀 ?', ?, 'open ?").sql, "SELECT 'émoji 😀 ?', $1, 'open ?")
        XCTAssertEqual(rewrite("").sql, "")
        XCTAssertEqual(rewrite("?").sql, "$1")
    }
}
