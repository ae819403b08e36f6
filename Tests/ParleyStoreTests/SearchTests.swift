@testable import ParleyStore
import XCTest

/// Full-text search (migration 6): ranking, snippets, scoping to the owner, the index kept in sync
/// by triggers, and the index built for rows written before the migration.
final class SearchTests: StoreTestCase {
    /// A conversation with one finished user/assistant turn.
    private func turn(_ store: Store, title: String = "New conversation", owner: String = User.localID,
                      user: String, reply: String) throws -> (conversation: Conversation, user: Message, reply: Message) {
        let conversation = try store.createConversation(title: title, ownedBy: owner)
        let turn = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: user, model: nil)
        let finished = try store.finishMessage(id: turn.assistant.id, content: reply, status: .complete)
        return (conversation, turn.user, finished)
    }

    func testFindsMessagesAndTitlesBestFirstWithMarkedSnippets() throws {
        let store = try makeStore()
        let garden = try turn(store, title: "Garden", user: "When do tomatoes ripen?", reply: "Tomatoes ripen in August.")
        let trip = try turn(store, title: "Tomato festival trip", user: "Plan a trip", reply: "Sure.")
        _ = try turn(store, user: "unrelated", reply: "nothing here")
        let hits = try store.search("tomato").hits
        XCTAssertEqual(Set(hits.map(\.conversation.id)), [garden.conversation.id, trip.conversation.id])
        let gardenHit = try XCTUnwrap(hits.first { $0.conversation.id == garden.conversation.id })
        XCTAssertNotNil(gardenHit.messageID)
        XCTAssertTrue(gardenHit.snippet.contains("\u{E000}Tomato\u{E001}") || gardenHit.snippet.contains("\u{E000}tomato\u{E001}"),
                      gardenHit.snippet)
        let tripHit = try XCTUnwrap(hits.first { $0.conversation.id == trip.conversation.id })
        XCTAssertNil(tripHit.messageID, "the title matched")
        // One hit per conversation even when several of its messages match.
        XCTAssertEqual(hits.count, 2)
    }

    func testQuotesPrefixNearUnicodeAndCJKWork() throws {
        let store = try makeStore()
        let one = try turn(store, user: "the quick brown fox", reply: "東京タワーは高い")
        let two = try turn(store, user: "naïve café au lait", reply: "brown quick")
        XCTAssertEqual(try store.search("\"quick brown\"").hits.map(\.conversation.id), [one.conversation.id])
        XCTAssertEqual(Set(try store.search("qui*").hits.map(\.conversation.id)), [one.conversation.id, two.conversation.id])
        XCTAssertEqual(try store.search("NEAR(quick fox)").hits.map(\.conversation.id), [one.conversation.id])
        XCTAssertEqual(try store.search("東京タワー").hits.map(\.conversation.id), [one.conversation.id])
        XCTAssertEqual(try store.search("café").hits.map(\.conversation.id), [two.conversation.id])
        XCTAssertEqual(try store.search("CAFÉ").hits.map(\.conversation.id), [two.conversation.id], "case-insensitive")
        XCTAssertEqual(try store.search("fox AND 東京").hits.map(\.conversation.id), [],
                       "in a longer query a 2-character term matches nothing")
    }

    func testMoreMatchesThanTheBudgetAreAnsweredNewestFirst() throws {
        let store = try makeStore()
        var ids: [String] = []
        for index in 0..<5 {
            ids.append(try turn(store, user: "albatross \(index)", reply: "ok").conversation.id)
        }
        let ranked = try store.search("albatross")
        XCTAssertEqual(ranked.order, .relevance)
        XCTAssertEqual(ranked.hits.count, 5)
        let broad = try store.search("albatross", candidates: 2)
        XCTAssertEqual(broad.order, .newest)
        XCTAssertEqual(broad.hits.map(\.conversation.id), Array(ids.suffix(3).reversed()),
                       "the conversations of the newest budget + 1 matches, newest first")
        XCTAssertTrue(broad.hits[0].snippet.contains("\u{E000}albatross\u{E001}"), broad.hits[0].snippet)
        XCTAssertEqual(try store.search("albatross", candidates: 5).order, .relevance)
        XCTAssertEqual(try store.search("al").order, .newest)
    }

    func testQueriesUnderThreeCharactersAreFoundAsText() throws {
        let store = try makeStore()
        let old = try turn(store, title: "Go notes", user: "east to 東京 by train", reply: "ok")
        let new = try turn(store, user: "a long text about go and more, then go again", reply: "東京")
        XCTAssertEqual(try store.search("東京").hits.map(\.conversation.id), [new.conversation.id, old.conversation.id])
        let hits = try store.search("go").hits
        XCTAssertEqual(hits.map(\.conversation.id), [new.conversation.id, old.conversation.id])
        XCTAssertEqual(hits[0].snippet, "a long text about \u{E000}go\u{E001} and more, then \u{E000}go\u{E001} again")
        XCTAssertNil(hits[1].messageID, "the title matched")
        XCTAssertEqual(hits[1].snippet, "\u{E000}Go\u{E001} notes")
        XCTAssertEqual(try store.search("go", candidates: 1).hits.count, 1, "the newest candidates only")
        XCTAssertEqual(try store.search("(").hits.count, 0, "plain text, no syntax")
    }

    func testSnippetsMarkTheQueryTermsInTheText() {
        XCTAssertEqual(SearchSnippet.terms(of: "fox"), ["fox"])
        XCTAssertEqual(SearchSnippet.terms(of: "\"quick brown\" fox*"), ["quick brown", "fox"])
        XCTAssertEqual(SearchSnippet.terms(of: "NEAR(quick fox, 10) OR ^lazy AND dog NOT cat"), ["quick", "fox", "lazy", "dog"])
        XCTAssertEqual(SearchSnippet.terms(of: "body:2026 \"say \"\"hi\"\"\" 東京タワー"), ["2026", "say \"hi\"", "東京タワー"])
        XCTAssertEqual(SearchSnippet.terms(of: "(alpha OR beta) + gamma"), ["alpha", "beta", "gamma"])

        let long = String(repeating: "a", count: 40) + " Fox " + String(repeating: "b", count: 50) + " fox"
        XCTAssertEqual(SearchSnippet.make(terms: ["fox"], in: long),
                       "…" + String(repeating: "a", count: 23) + " \u{E000}Fox\u{E001} " + String(repeating: "b", count: 36) + "…")
        XCTAssertEqual(SearchSnippet.make(terms: ["quick", "ick bro"], in: "the quick brown fox"),
                       "the \u{E000}quick bro\u{E001}wn fox", "overlapping matches are one mark")
        XCTAssertEqual(SearchSnippet.make(terms: ["zzz"], in: "nothing here"), "nothing here")
        XCTAssertEqual(SearchSnippet.make(terms: ["x"], in: "a \u{E000}x\u{E001} b"), "a \u{E000}x\u{E001} b",
                       "marks in the text itself are dropped first")
    }

    /// Snippets are bounded in UTF-8 bytes (marks and ellipses included), not only in characters: one
    /// grapheme cluster can hold 450,000 combining marks.
    func testSnippetsAreBoundedInBytes() {
        let monster = "zq" + String(repeating: "\u{0301}", count: 450_000) + " tail"
        let head = SearchSnippet.make(terms: ["nothing"], in: monster)
        XCTAssertLessThanOrEqual(head.utf8.count, SearchSnippet.maxBytes)
        XCTAssertTrue(head.hasSuffix("…"))
        // Many short matches: every mark counts against the budget.
        let dense = String(repeating: "a ", count: 400)
        let marked = SearchSnippet.make(terms: ["a"], in: dense)
        XCTAssertLessThanOrEqual(marked.utf8.count, SearchSnippet.maxBytes)
        XCTAssertTrue(marked.hasPrefix("\u{E000}a\u{E001} \u{E000}a\u{E001}"), marked)
        // Wide characters: 64 of them would be 256 bytes of emoji, kept whole; 4-byte scalars never split.
        let emoji = String(repeating: "👩‍👩‍👧‍👦", count: 100) + " find me " + String(repeating: "👩‍👩‍👧‍👦", count: 100)
        let family = SearchSnippet.make(terms: ["find"], in: emoji)
        XCTAssertLessThanOrEqual(family.utf8.count, SearchSnippet.maxBytes)
        XCTAssertTrue(family.contains("\u{E000}find\u{E001}"), family)
        XCTAssertTrue(family.hasPrefix("…👩‍👩‍👧‍👦"), family)
        XCTAssertEqual(BoundedText.prefix("héllo wörld", characters: 5, bytes: 100).text, "héllo")
        XCTAssertEqual(BoundedText.prefix("héllo", characters: 5, bytes: 3).text, "hé")
        XCTAssertFalse(BoundedText.prefix("short", characters: 10, bytes: 10).cut)
    }

    func testSyntaxErrorsAreInvalidQueries() throws {
        let store = try makeStore()
        _ = try turn(store, user: "hello there", reply: "hi")
        for query in ["(abc", "fox AND", "\"unterminated", "NOT fox", "nosuchcolumn:fox"] {
            XCTAssertThrowsError(try store.search(query).hits, query) { error in
                guard case StoreError.invalidQuery = error else { return XCTFail("\(query): \(error)") }
            }
        }
    }

    func testOnlyTheOwnersConversationsAreSearched() throws {
        let store = try makeStore()
        let mine = try turn(store, owner: "alice", user: "secret plans", reply: "ok")
        _ = try turn(store, owner: "bob", user: "secret plans too", reply: "ok")
        XCTAssertEqual(try store.search("secret", ownedBy: "alice").hits.map(\.conversation.id), [mine.conversation.id])
        XCTAssertEqual(try store.search("secret", ownedBy: "carol").hits, [])
    }

    func testTheIndexFollowsEditsDeletesAndStreaming() throws {
        let store = try makeStore()
        let first = try turn(store, title: "Alpha title", user: "question one", reply: "answer with zebra")
        XCTAssertEqual(try store.search("zebra").hits.count, 1)
        // A reply resumed is streaming: out of the index until it finishes; its progress is not indexed.
        _ = try store.resumeStreaming(id: first.reply.id)
        XCTAssertEqual(try store.search("zebra").hits.count, 0)
        try store.saveProgress([MessageProgress(id: first.reply.id, content: "answer with zebra and yak", reasoning: "")])
        XCTAssertEqual(try store.search("yak").hits.count, 0)
        _ = try store.finishMessage(id: first.reply.id, content: "answer with zebra and yak", status: .stopped)
        XCTAssertEqual(try store.search("yak").hits.count, 1)
        // Renaming re-indexes the title.
        _ = try store.updateConversation(id: first.conversation.id, title: "Omega title")
        XCTAssertEqual(try store.search("Alpha").hits.count, 0)
        XCTAssertEqual(try store.search("Omega").hits.count, 1)
        // Deleting the conversation empties the index.
        try store.deleteConversation(id: first.conversation.id)
        XCTAssertEqual(try store.search("zebra").hits.count, 0)
        XCTAssertEqual(try store.search("Omega").hits.count, 0)
        let left = try store.read { (database) throws(StoreError) in
            try database.queryFirst("SELECT (SELECT count(*) FROM search_index) + (SELECT count(*) FROM search_documents)") {
                $0.int64(0)
            }
        }
        XCTAssertEqual(left, 0)
    }

    func testArchivedConversationsAreLeftOutUnlessAskedFor() throws {
        let store = try makeStore()
        let kept = try turn(store, user: "pelican notes", reply: "ok")
        let put = try turn(store, user: "pelican archive", reply: "ok")
        _ = try store.updateConversation(id: put.conversation.id, archived: true)
        XCTAssertEqual(try store.search("pelican").hits.map(\.conversation.id), [kept.conversation.id])
        XCTAssertEqual(try store.search("pelican", archived: true).hits.map(\.conversation.id), [put.conversation.id])
        XCTAssertEqual(try store.search("pelican", archived: nil).hits.count, 2)
        _ = try store.updateConversation(id: kept.conversation.id, pinned: true)
        XCTAssertEqual(try store.search("pelican", pinned: true, archived: nil).hits.map(\.conversation.id), [kept.conversation.id])
    }

    func testTheMarkCharactersInTextNeverLookLikeMatches() throws {
        let store = try makeStore()
        _ = try turn(store, user: "odd \u{E000}chars\u{E001} walrus", reply: "ok")
        let hit = try XCTUnwrap(try store.search("walrus").hits.first)
        XCTAssertEqual(hit.snippet.unicodeScalars.filter { $0 == SearchHit.matchStart }.count, 1, hit.snippet)
        XCTAssertTrue(hit.snippet.contains("\u{E000}walrus\u{E001}"), hit.snippet)
    }

    func testTheMigrationIndexesRowsWrittenBeforeIt() throws {
        try requireSQLite("migrates an old SQLite file")
        do {
            // A version-5 file with a conversation and a finished and a streaming message.
            let database = try SQLiteDatabase(path: databasePath, readOnly: false, busyTimeoutMilliseconds: 1000)
            for (index, migration) in Migration.all.prefix(5).enumerated() {
                try database.execute(migration.sql)
                try database.execute("PRAGMA user_version = \(index + 1)")
            }
            try database.execute("""
                INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c1', 'Old heron notes', 1, 1);
                INSERT INTO messages (id, conversation_id, role, content, status, created_at, updated_at)
                VALUES ('m1', 'c1', 'user', 'about kingfishers', 'complete', 2, 2),
                       ('m2', 'c1', 'assistant', 'cormorant half-written', 'streaming', 3, 3);
                """)
        }
        let store = try makeStore()
        XCTAssertEqual(try store.search("heron").hits.map(\.messageID), [nil])
        XCTAssertEqual(try store.search("kingfisher").hits.map(\.messageID), ["m1"])
        XCTAssertEqual(try store.search("cormorant").hits.count, 0, "streaming messages are not indexed")
        XCTAssertEqual(try store.markInterruptedAtStartup(), 1)
        XCTAssertEqual(try store.search("cormorant").hits.map(\.messageID), ["m2"], "indexed once it is final")
    }
}
