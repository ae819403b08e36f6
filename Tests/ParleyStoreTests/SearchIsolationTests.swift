@testable import ParleyStore
import XCTest

/// Search tells one user nothing about another's text (issue 17, item 2): neither the results, their
/// order nor the query's work depend on what other users wrote.
final class SearchIsolationTests: StoreTestCase {
    private func conversation(_ store: Store, owner: String, user: String, reply: String = "ok") throws -> Conversation {
        let conversation = try store.createConversation(ownedBy: owner)
        let turn = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: user, model: nil)
        _ = try store.finishMessage(id: turn.assistant.id, content: reply, status: .complete)
        return conversation
    }

    /// `count` finished messages of `owner` holding `text`, written in one statement (the triggers index them).
    private func bulk(_ store: Store, owner: String, count: Int, text: String) throws {
        let conversation = try store.createConversation(ownedBy: owner)
        _ = try store.write { (writer, _) throws(StoreError) in
            try writer.database.run(
                """
                WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?3)
                INSERT INTO messages (id, conversation_id, parent_id, role, content, status, created_at, updated_at)
                SELECT ?1 || i, ?2, NULL, 'user', ?4 || ' ' || i, 'complete', i, i FROM n
                """,
                [.text("bulk-\(owner)-"), .text(conversation.id), .integer(Int64(count)), .text(text)])
        }
    }

    /// The probe of the issue: two conversations of the caller's, one with the control word in a longer
    /// text, one with the guessed word; which ranks first must not say whether anybody else wrote the guess.
    func testTheOrderDoesNotSayWhetherAnotherUserWroteTheGuessedWord() throws {
        func probe(otherUserWritesGuess: Bool, path: String) throws -> [String] {
            let store = try Store(path: path)
            let control = try conversation(store, owner: "mallory", user: "zz kestrel zz zzz")
            let guess = try conversation(store, owner: "mallory", user: "zz marmoset")
            try bulk(store, owner: "victim", count: 50, text: otherUserWritesGuess ? "my marmoset plan" : "my other plan")
            let hits = try store.search("marmoset OR kestrel", ownedBy: "mallory").hits.map(\.conversation.id)
            XCTAssertEqual(Set(hits), [control.id, guess.id])
            return hits.map { $0 == control.id ? "control" : "guess" }
        }
        let without = try probe(otherUserWritesGuess: false, path: directory.appendingPathComponent("a.sqlite").path)
        let with = try probe(otherUserWritesGuess: true, path: directory.appendingPathComponent("b.sqlite").path)
        XCTAssertEqual(with, without, "the order must not depend on the other user's words")
        XCTAssertEqual(without, ["guess", "control"], "the shorter row with one match ranks first")
    }

    /// The MATCH walks the caller's rows only: its virtual machine steps are the same whether or not
    /// another user has 30,000 matching messages, and a word the caller never wrote costs as little.
    func testTheQueryWorkDoesNotGrowWithAnotherUsersMatches() throws {
        try requireSQLite("FTS5's own tokenizer, steps and query plan")
        let store = try makeStore()
        _ = try conversation(store, owner: "alice", user: "the quick brown dog")
        _ = try conversation(store, owner: "alice", user: "quick brown bread", reply: "quick brown again")
        let before = try store.search("quick brown", ownedBy: "alice")
        let absentBefore = try store.search("zygote", ownedBy: "alice")
        try bulk(store, owner: "bob", count: 30_000, text: "the quick brown fox")
        let after = try store.search("quick brown", ownedBy: "alice")
        let absentAfter = try store.search("zygote", ownedBy: "alice")
        XCTAssertEqual(after.hits.map(\.conversation.id), before.hits.map(\.conversation.id))
        XCTAssertEqual(after.hits.count, 2)
        XCTAssertGreaterThan(before.steps, 0)
        XCTAssertEqual(after.steps, before.steps, "bob's 30,000 matches must not add work to alice's search")
        XCTAssertEqual(absentAfter.steps, absentBefore.steps)
        // Bob's own search does walk his rows (so the measure is not blind): newest first past the budget.
        let bobs = try store.search("quick brown", ownedBy: "bob")
        XCTAssertEqual(bobs.order, .newest)
        XCTAssertGreaterThan(bobs.steps, after.steps * 10)
    }

    /// Short queries scan the documents of the owner only, not everyone's.
    func testTheShortQueryScanDoesNotGrowWithAnotherUsersDocuments() throws {
        try requireSQLite("FTS5's own tokenizer, steps and query plan")
        let store = try makeStore()
        _ = try conversation(store, owner: "alice", user: "go west")
        let plan = try store.read { (database) throws(StoreError) in
            try database.query(
                "EXPLAIN QUERY PLAN SELECT doc_id FROM search_documents INDEXED BY search_documents_owner "
                    + "WHERE owner_id = ?1 ORDER BY doc_id DESC", [.text("alice")]) { $0.text(3) }
        }
        XCTAssertTrue(plan.contains { $0.contains("USING COVERING INDEX search_documents_owner (owner_id=?)") }, "\(plan)")
        try bulk(store, owner: "bob", count: 2_000, text: "go go go")
        let hits = try store.search("go", ownedBy: "alice").hits
        XCTAssertEqual(hits.count, 1)
    }

    /// A conversation given to another user (local mode's, when team mode starts) is indexed as theirs.
    func testAConversationGivenToAnotherUserIsSearchedAsTheirs() throws {
        let store = try makeStore()
        let local = try conversation(store, owner: User.localID, user: "heliotrope notes")
        XCTAssertEqual(try store.search("heliotrope").hits.map(\.conversation.id), [local.id])
        _ = try store.createUser(username: "root", displayName: "root", role: .admin, passwordHash: nil)
        let root = try XCTUnwrap(try store.user(username: "root"))
        XCTAssertEqual(try store.assignLocalConversations(to: root.id), 1)
        XCTAssertEqual(try store.search("heliotrope").hits, [], "no longer the local user's")
        let hits = try store.search("heliotrope", ownedBy: root.id).hits
        XCTAssertEqual(hits.map(\.conversation.id), [local.id])
        XCTAssertEqual(hits.first?.snippet, "\u{E000}heliotrope\u{E001} notes", "the snippet has no owner in it")
        // The index agrees with its stored text (FTS5 re-tokenizes every row and compares).
        guard !Self.onPostgres else { return }
        XCTAssertNoThrow(try store.write { (writer, _) throws(StoreError) in
            try writer.database.run("INSERT INTO search_index (search_index) VALUES ('integrity-check')")
        })
    }

    /// A MATCH on a connection with no search owner set finds nothing, rather than anybody's rows.
    func testAMatchWithoutAnOwnerFindsNothing() throws {
        try requireSQLite("FTS5's own tokenizer, steps and query plan")
        let store = try makeStore()
        _ = try conversation(store, owner: "alice", user: "obsidian")
        let rows = try store.read { (database) throws(StoreError) in
            try database.query("SELECT rowid FROM search_index WHERE search_index MATCH 'obsidian'") { $0.int64(0) }
        }
        XCTAssertEqual(rows, [])
    }

    func testRankingScoresTheCallersRowsAlone() {
        func candidate(_ doc: Int64, _ conversation: String, length: Int, _ phrases: [Int]) -> SearchRanking.Candidate {
            .init(doc: doc, conversationID: conversation, messageID: nil, counts: MatchCounts(length: length, phrases: phrases))
        }
        let ranking = SearchRanking(candidates: [
            candidate(1, "a", length: 40, [1, 0]), candidate(2, "b", length: 10, [0, 1]),
            candidate(3, "b", length: 10, [0, 3]), candidate(4, "c", length: 10, [0, 1]),
        ])
        XCTAssertEqual(ranking.best(limit: 10).map(\.doc), [1, 3, 4],
                       "a rarer phrase weighs more, even in a longer row; the best row of each conversation")
        XCTAssertEqual(ranking.best(limit: 1).map(\.doc), [1])
        let tie = SearchRanking(candidates: [candidate(1, "a", length: 5, [1]), candidate(2, "b", length: 5, [1])])
        XCTAssertEqual(tie.best(limit: 2).map(\.doc), [2, 1], "ties go to the newer row")
        XCTAssertEqual(MatchCounts("12 0 3"), MatchCounts(length: 12, phrases: [0, 3]))
        XCTAssertNil(MatchCounts("x"))
    }
}
