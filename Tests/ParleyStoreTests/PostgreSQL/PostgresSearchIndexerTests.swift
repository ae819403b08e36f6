import Foundation
@testable import ParleyStore
import XCTest

/// The trigrams Parley makes for PostgreSQL's search index (`PostgresSearchIndexer`, migration 6) are
/// the set plpgsql's `parley_search_trigrams` makes from the same text, for every kind of text; the
/// queue is emptied by the write that filled it, and what a write outside the store left queued is
/// indexed by the next write.
final class PostgresSearchIndexerTests: XCTestCase {
    static let bodies = [
        "", "a", "ab", "abc", "aaaa", "The Quick Brown Fox", "naïve CAFÉ au lait", "東京タワーは高い",
        "İstanbul ISTANBUL ıi", "Straße STRASSE ẞ", "ΟΔΥΣΣΕΥΣ Σίσυφος", "e\u{301}e\u{301}e\u{301} combining",
        "👩‍👩‍👧 family 👍🏽", "quotes \" and \\ backslashes \\\" {braces}, commas", "tab\tnew\nline\r\n",
        "x\u{E000}marked\u{E001}y", "NULL", "{}", "  spaces   ", String(repeating: "w0001 w0002 ", count: 200),
        "Ǆ ǅ ǆ ﬁ ﬀ K Å Ω", "\u{1F}owner separator", "ɐɑɒ ⱯⱭⱰ", "𝐀𝐁𝐂 𝔄𝔅",
    ]

    private var schema: PostgresScratchSchema!

    override func setUpWithError() throws {
        schema = try PostgresScratchSchema.make()
        try schema.migrate()
    }

    override func tearDown() {
        schema?.drop()
    }

    /// Writes each body as a message of `owner`'s, straight into the tables (no store): queued only.
    private func insert(_ bodies: [String], owner: String, conversation: String) throws {
        var rows = """
            INSERT INTO conversations (id, title, created_at, updated_at, owner_id)
            VALUES ('\(conversation)', 'Title of \(conversation)', 1, 1, '\(owner)');

            """
        for (index, body) in bodies.enumerated() {
            rows += """
                INSERT INTO messages (id, conversation_id, role, content, status, created_at, updated_at)
                VALUES ('\(conversation)-\(index)', '\(conversation)', 'user', \(PostgresScratchSchema.literal(body)),
                        'complete', \(index), \(index));

                """
        }
        try schema.run(rows)
    }

    private func count(_ sql: String) throws -> Int {
        Int(try schema.run(sql)) ?? -1
    }

    func testTheTrigramsAreTheSetPlpgsqlMakes() throws {
        try insert(Self.bodies, owner: "alice7", conversation: "c1")
        XCTAssertEqual(try count("SELECT count(*) FROM search_index"), 0, "queued, not indexed, before a store write")
        XCTAssertEqual(try count("SELECT count(*) FROM search_pending"), Self.bodies.count + 1)
        try schema.indexQueuedSearchDocuments()
        XCTAssertEqual(try count("SELECT count(*) FROM search_pending"), 0)
        XCTAssertEqual(try count("SELECT count(*) FROM search_index"), Self.bodies.count + 1, "every message and the title")
        let differing = try schema.run("""
            SELECT m.id FROM search_index i JOIN search_documents d ON d.doc_id = i.doc_id
            LEFT JOIN messages m ON m.id = d.message_id
            WHERE NOT (i.trigrams @> parley_search_trigrams(d.owner_id, i.body)
                       AND i.trigrams <@ parley_search_trigrams(d.owner_id, i.body))
               OR cardinality(i.trigrams) <> cardinality(parley_search_trigrams(d.owner_id, i.body))
               OR i.body <> parley_search_body(coalesce(m.content, 'Title of c1'))
            """)
        XCTAssertEqual(differing, "", "rows whose trigrams or body differ from plpgsql's")
        XCTAssertGreaterThan(try count("SELECT sum(cardinality(trigrams)) FROM search_index"), 200)
        XCTAssertEqual(try count("""
            SELECT count(*) FROM search_index, unnest(trigrams) t WHERE NOT starts_with(t, 'alice7' || chr(31))
            """), 0, "every trigram is the owner's")
    }

    func testAWriteIndexesWhatAnotherWriteLeftQueued() throws {
        try insert(["left behind by a script"], owner: "bob", conversation: "c2")
        let database = try schema.connect(indexingSearch: true)
        try database.transaction(.immediate) { () throws(StoreError) in
            _ = try database.run("UPDATE conversations SET updated_at = 2 WHERE id = 'c2'")
        }
        XCTAssertEqual(try count("SELECT count(*) FROM search_pending"), 0)
        XCTAssertEqual(try count("""
            SELECT count(*) FROM search_index WHERE trigrams @> parley_search_trigrams('bob', 'behind')
            """), 1)
    }

    /// Batches of 4: 26 documents take 7 rounds, the last one short; nothing is left or indexed twice.
    func testEveryDocumentIsIndexedWhateverTheBatches() throws {
        try insert(Array(Self.bodies.dropLast()), owner: "grace", conversation: "c5")
        XCTAssertEqual(try count("SELECT count(*) FROM search_pending"), Self.bodies.count)
        let database = try schema.connect()
        try database.transaction(.immediate) { () throws(StoreError) in
            try PostgresSearchIndexer(batch: 4).indexQueued(on: database)
        }
        XCTAssertEqual(try count("SELECT count(*) FROM search_pending"), 0)
        XCTAssertEqual(try count("SELECT count(*) FROM search_index"), Self.bodies.count)
        XCTAssertEqual(try count("SELECT count(DISTINCT doc_id) FROM search_documents"), Self.bodies.count)
    }

    /// A document another transaction holds is skipped, not waited for; that transaction indexes it.
    func testAWriterDoesNotWaitForAnotherWritersQueue() throws {
        try insert(["held by another writer"], owner: "heidi", conversation: "c6")
        let holder = try schema.connect()
        let other = try schema.connect(indexingSearch: true)
        try other.execute("SET statement_timeout = 3000")  // a wait would fail the test, not hang it
        try holder.transaction(.immediate) { () throws(StoreError) in
            _ = try holder.query("SELECT doc_id FROM search_pending FOR UPDATE", []) { $0.int64(0) }
            let began = ContinuousClock.now
            try other.transaction(.immediate) {}
            XCTAssertLessThan(ContinuousClock.now - began, .seconds(2), "skipped, not waited for")
            XCTAssertEqual(try holder.queryFirst("SELECT count(*) FROM search_pending", []) { $0.int64(0) }, 2)
            try PostgresSearchIndexer().indexQueued(on: holder)
        }
        XCTAssertEqual(try count("SELECT count(*) FROM search_pending"), 0)
        XCTAssertEqual(try count("SELECT count(*) FROM search_index"), 2)
    }

    func testARolledBackWriteLeavesNothingQueuedOrIndexed() throws {
        try insert([], owner: "carol", conversation: "c3")
        try schema.indexQueuedSearchDocuments()
        let database = try schema.connect(indexingSearch: true)
        XCTAssertThrowsError(try database.transaction(.immediate) { () throws(StoreError) in
            try database.run("""
                INSERT INTO messages (id, conversation_id, role, content, status, created_at, updated_at)
                VALUES ('gone', 'c3', 'user', 'never committed', 'complete', 1, 1)
                """)
            throw StoreError.conflict("undo")
        })
        XCTAssertEqual(try count("SELECT count(*) FROM search_pending"), 0)
        XCTAssertEqual(try count("SELECT count(*) FROM search_index"), 1, "the title only")
    }

    func testAnOwnerChangeMovesQueuedAndIndexedRows() throws {
        try insert(["moved with its conversation"], owner: "dave", conversation: "c4")
        try schema.run("UPDATE conversations SET owner_id = 'erin' WHERE id = 'c4'")
        try schema.indexQueuedSearchDocuments()
        XCTAssertEqual(try count("""
            SELECT count(*) FROM search_index WHERE trigrams @> parley_search_trigrams('erin', 'moved')
            """), 1)
        try schema.run("UPDATE conversations SET owner_id = 'frank' WHERE id = 'c4'")
        XCTAssertEqual(try count("""
            SELECT count(*) FROM search_index WHERE trigrams @> parley_search_trigrams('frank', 'moved')
               OR trigrams @> parley_search_trigrams('erin', 'moved')
            """), 1)
        XCTAssertEqual(try count("""
            SELECT count(*) FROM search_index WHERE trigrams @> parley_search_trigrams('frank', 'moved')
            """), 1)
    }

    func testTheArrayLiteralCarriesEveryCharacter() {
        var literal = PostgresArrayLiteral()
        XCTAssertEqual(literal.text, "{}")
        for element in ["a\"b", "c\\d", "", "{,}", "é"] { literal.append(element) }
        XCTAssertEqual(literal.text, #"{"a\"b","c\\d","","{,}","é"}"#)
        XCTAssertEqual(PostgresSearchIndexer.trigrams(owner: "o", lowered: "abab"), "{\"o\u{1F}aba\",\"o\u{1F}bab\"}")
        XCTAssertEqual(PostgresSearchIndexer.trigrams(owner: "o", lowered: "ab"), "{}")
    }
}
