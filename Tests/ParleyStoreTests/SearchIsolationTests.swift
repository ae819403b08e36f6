import Foundation
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

    /// The work of `query`'s match for `owner` on PostgreSQL, independent of the machine: the shared
    /// buffer blocks (hit + read) `EXPLAIN (ANALYZE, BUFFERS)` counts while executing the store's own
    /// match statement (`PostgresSearchSQL`, same parameters, same connection type), and the row ids
    /// the GIN index scans hand over. Tables are analyzed first, as autovacuum would, so the plan is
    /// the one a settled database runs.
    private func postgresWork(_ store: Store, _ query: String, ownedBy owner: String) throws
        -> (blocks: Int, indexRows: Int, rows: Int, plan: String) {
        let parsed = try PostgresSearchQuery(query)
        let condition = PostgresSearchSQL.condition(for: parsed)
        let sql = "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, FORMAT JSON) "
            + PostgresSearchSQL.matchSQL(condition: condition.sql)
        let arguments: [SQLValue] = [.text(query), .text(owner), .null, .bool(false), .integer(51)] + condition.arguments
        let json = try store.read { (database) throws(StoreError) in
            try database.execute(PostgresSearchSQL.ownerLedPlans)
            return try database.query(sql, arguments) { $0.text(0) }.joined()
        }
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        let plan = try XCTUnwrap(root.first?["Plan"] as? [String: Any])
        func blocks(_ node: [String: Any]) -> Int {
            (node["Shared Hit Blocks"] as? Int ?? 0) + (node["Shared Read Blocks"] as? Int ?? 0)
        }
        func indexRows(_ node: [String: Any]) -> Int {
            let own = (node["Node Type"] as? String) == "Bitmap Index Scan" ? (node["Actual Rows"] as? Int ?? 0) : 0
            return own + ((node["Plans"] as? [[String: Any]]) ?? []).map(indexRows).reduce(0, +)
        }
        /// Rows every node handled: returned and removed by its filters, times its loops.
        func rows(_ node: [String: Any]) -> Int {
            let loops = node["Actual Loops"] as? Int ?? 1
            let handled = ["Actual Rows", "Rows Removed by Filter", "Rows Removed by Index Recheck", "Rows Removed by Join Filter"]
                .map { node[$0] as? Int ?? 0 }.reduce(0, +)
            return handled * loops + ((node["Plans"] as? [[String: Any]]) ?? []).map(rows).reduce(0, +)
        }
        func shape(_ node: [String: Any]) -> String {
            let name = (node["Node Type"] as? String ?? "?") + ((node["Index Name"] as? String).map { " " + $0 } ?? "")
            let children = ((node["Plans"] as? [[String: Any]]) ?? []).map(shape)
            return children.isEmpty ? name : name + "(" + children.joined(separator: ", ") + ")"
        }
        return (blocks(plan), indexRows(plan), rows(plan), shape(plan))
    }

    /// PostgreSQL: the documents whose trigrams hold `text`'s trigrams as `owner` indexes them.
    private func found(_ store: Store, _ text: String, trigramsOf owner: String) throws -> [Int64] {
        try store.read { (database) throws(StoreError) in
            try database.query("SELECT doc_id FROM search_index WHERE trigrams @> parley_search_trigrams(?1, ?2)",
                               [.text(owner), .text(text)]) { $0.int64(0) }
        }
    }

    /// Statistics as autovacuum would leave them, so the planner sees the tables as they are.
    private func analyze(_ store: Store) throws {
        guard Self.onPostgres else { return }
        _ = try store.write { (writer, _) throws(StoreError) in
            try writer.database.execute("ANALYZE search_index; ANALYZE search_documents; ANALYZE conversations")
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

    /// The MATCH walks the caller's rows only: its work (SQLite: virtual machine steps; PostgreSQL:
    /// rows handled by every plan node, GIN row ids and the plan itself, `postgresWork`) is the same
    /// whether or not another user has 30,000 matching messages, and a word the caller never wrote
    /// costs as little.
    func testTheQueryWorkDoesNotGrowWithAnotherUsersMatches() throws {
        let store = try makeStore()
        _ = try conversation(store, owner: "alice", user: "the quick brown dog")
        _ = try conversation(store, owner: "alice", user: "quick brown bread", reply: "quick brown again")
        try analyze(store)
        let before = try store.search("quick brown", ownedBy: "alice")
        let absentBefore = try store.search("zygote", ownedBy: "alice")
        let workBefore = Self.onPostgres ? try postgresWork(store, "quick brown", ownedBy: "alice") : (blocks: 0, indexRows: 0, rows: 0, plan: "")
        let absentWorkBefore = Self.onPostgres ? try postgresWork(store, "zygote", ownedBy: "alice") : (blocks: 0, indexRows: 0, rows: 0, plan: "")
        try bulk(store, owner: "bob", count: 30_000, text: "the quick brown fox")
        try analyze(store)
        let after = try store.search("quick brown", ownedBy: "alice")
        let absentAfter = try store.search("zygote", ownedBy: "alice")
        XCTAssertEqual(after.hits.map(\.conversation.id), before.hits.map(\.conversation.id))
        XCTAssertEqual(after.hits.count, 2)
        if Self.onPostgres {
            let workAfter = try postgresWork(store, "quick brown", ownedBy: "alice")
            let absentWorkAfter = try postgresWork(store, "zygote", ownedBy: "alice")
            let bobs = try postgresWork(store, "quick brown", ownedBy: "bob")
            print("postgres search work (blocks, GIN row ids, rows, plan): alice before \(workBefore), after \(workAfter); "
                  + "absent word before \(absentWorkBefore), after \(absentWorkAfter); bob \(bobs)")
            XCTAssertGreaterThan(workBefore.rows, 0)
            XCTAssertEqual(workAfter.plan, workBefore.plan, "the plan does not follow other users' statistics")
            XCTAssertEqual(absentWorkAfter.plan, absentWorkBefore.plan)
            XCTAssertEqual(workAfter.indexRows, workBefore.indexRows, "the GIN scans hand over alice's rows alone")
            XCTAssertEqual(absentWorkAfter.indexRows, absentWorkBefore.indexRows)
            XCTAssertEqual(workAfter.rows, workBefore.rows, "bob's 30,000 matches add no row to alice's search")
            XCTAssertEqual(absentWorkAfter.rows, absentWorkBefore.rows)
            // Blocks also count the indexes' depth, which grows with every user's rows on any engine (one
            // more level per lookup: 23 -> 29 measured); never bob's rows themselves (216 with GIN's pending list).
            XCTAssertLessThanOrEqual(workAfter.blocks, workBefore.blocks + Self.postgresDepthBlocks)
            XCTAssertLessThanOrEqual(absentWorkAfter.blocks, absentWorkBefore.blocks + Self.postgresDepthBlocks)
            // Bob's own search handles his rows (so the measure is not blind), up to the budget + 1.
            XCTAssertGreaterThan(bobs.rows, workAfter.rows * 5)
            return
        }
        XCTAssertGreaterThan(before.steps, 0)
        XCTAssertEqual(after.steps, before.steps, "bob's 30,000 matches must not add work to alice's search")
        XCTAssertEqual(absentAfter.steps, absentBefore.steps)
        // Bob's own search does walk his rows (so the measure is not blind): newest first past the budget.
        let bobs = try store.search("quick brown", ownedBy: "bob")
        XCTAssertEqual(bobs.order, .newest)
        XCTAssertGreaterThan(bobs.steps, after.steps * 10)
    }

    /// What other users' rows may add to a PostgreSQL search's blocks: a level more in the indexes it
    /// looks up (rows and plan: nothing, as on SQLite, whose test counts virtual machine steps).
    static let postgresDepthBlocks = 8

    /// Short queries scan the documents of the owner only, not everyone's.
    func testTheShortQueryScanDoesNotGrowWithAnotherUsersDocuments() throws {
        let store = try makeStore()
        _ = try conversation(store, owner: "alice", user: "go west")
        if Self.onPostgres {
            try bulk(store, owner: "bob", count: 2_000, text: "go go go")
            try analyze(store)
            let plan = try shortScanPlan(store, owner: "alice")
            XCTAssertTrue(plan.json.contains("\"Index Name\": \"search_documents_owner\""), plan.json)
            let bobs = try shortScanPlan(store, owner: "bob")
            print("postgres short-query scan blocks: alice \(plan.blocks), bob \(bobs.blocks)")
            XCTAssertLessThanOrEqual(plan.blocks, 16, "alice's scan reads her few documents (and the indexes' levels), not bob's 2,000")
            XCTAssertGreaterThan(bobs.blocks, plan.blocks * 10, "the measure sees a scan over many documents")
        } else {
            let plan = try store.read { (database) throws(StoreError) in
                try database.query(
                    "EXPLAIN QUERY PLAN SELECT doc_id FROM search_documents INDEXED BY search_documents_owner "
                        + "WHERE owner_id = ?1 ORDER BY doc_id DESC", [.text("alice")]) { $0.text(3) }
            }
            XCTAssertTrue(plan.contains { $0.contains("USING COVERING INDEX search_documents_owner (owner_id=?)") }, "\(plan)")
            try bulk(store, owner: "bob", count: 2_000, text: "go go go")
        }
        let hits = try store.search("go", ownedBy: "alice").hits
        XCTAssertEqual(hits.count, 1)
    }

    /// PostgreSQL: `EXPLAIN (ANALYZE, BUFFERS)` of the short-query scan for `owner` looking for a
    /// word nobody wrote (so it walks all the owner's documents), and its shared blocks. Measured:
    /// alice (3 documents) 12 blocks beside bob's 2,000 documents; bob's own scan 6,034.
    private func shortScanPlan(_ store: Store, owner: String) throws -> (json: String, blocks: Int) {
        let json = try store.read { (database) throws(StoreError) in
            try database.execute(PostgresSearchSQL.ownerLedPlans)
            return try database.query("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, FORMAT JSON) " + PostgresSearchSQL.substringSQL,
                               [.text("qz"), .text(owner), .null, .bool(false), .integer(51)]) { $0.text(0) }.joined()
        }
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        let plan = try XCTUnwrap(root.first?["Plan"] as? [String: Any])
        return (json, (plan["Shared Hit Blocks"] as? Int ?? 0) + (plan["Shared Read Blocks"] as? Int ?? 0))
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
        guard !Self.onPostgres else {
            // Every row's trigrams are its owner's, made again from its body: none is left under the old owner.
            let stale = try store.read { (database) throws(StoreError) in
                try database.queryFirst(
                    "SELECT count(*) FROM search_index i JOIN search_documents d ON d.doc_id = i.doc_id "
                        + "WHERE i.trigrams IS DISTINCT FROM parley_search_trigrams(d.owner_id, i.body) "
                        + "OR EXISTS (SELECT 1 FROM unnest(i.trigrams) t WHERE NOT starts_with(t, d.owner_id || chr(31)))",
                    []) { $0.int64(0) }
            }
            XCTAssertEqual(stale, 0)
            XCTAssertEqual(try found(store, "heliotrope", trigramsOf: User.localID), [])
            XCTAssertEqual(try found(store, "heliotrope", trigramsOf: root.id).count, 1)
            return
        }
        XCTAssertNoThrow(try store.write { (writer, _) throws(StoreError) in
            try writer.database.run("INSERT INTO search_index (search_index) VALUES ('integrity-check')")
        })
    }

    /// A MATCH on a connection with no search owner set finds nothing, rather than anybody's rows; on
    /// PostgreSQL, trigrams without their owner (or with another's) find nothing either.
    func testAMatchWithoutAnOwnerFindsNothing() throws {
        let store = try makeStore()
        _ = try conversation(store, owner: "alice", user: "obsidian")
        if Self.onPostgres {
            XCTAssertEqual(try found(store, "obsidian", trigramsOf: "alice").count, 1, "the owned trigrams find it")
            let unowned = try store.read { (database) throws(StoreError) in
                try database.query("SELECT doc_id FROM search_index WHERE trigrams @> ARRAY['obs', 'bsi', 'sid', "
                                   + "'idi', 'dia', 'ian']", []) { $0.int64(0) }
            }
            XCTAssertEqual(unowned, [], "trigrams without an owner find nothing")
            XCTAssertEqual(try found(store, "obsidian", trigramsOf: ""), [])
            XCTAssertEqual(try found(store, "obsidian", trigramsOf: "bob"), [])
            return
        }
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
