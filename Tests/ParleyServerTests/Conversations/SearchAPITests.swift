import Foundation
import ParleyTestSupport
import XCTest

/// `GET /api/conversations?q=` over real HTTP: hits with escaped snippets, FTS5 syntax, bad queries,
/// filters, and one user's search never reaching another's conversations.
final class SearchAPITests: XCTestCase {
    func testHitsCarryTheConversationTheMessageAndAnEscapedSnippet() async throws {
        let parley = try startParley()
        let id = try await parley.conversation(["title": "Kitchen"])
        let (user, assistant) = try await parley.send(id, "Is <b>saffron</b> & \"vanilla\" pricey? 'yes'")
        _ = try await parley.finished(assistant)
        _ = try await parley.conversation(["title": "Other"])
        let reply = try await parley.call("GET", "/api/conversations?q=saffron")
        XCTAssertEqual(reply.status, 200, reply.text)
        let items = try XCTUnwrap(reply.exact["items"]?.array)
        XCTAssertEqual(items.count, 1)
        XCTAssertEqual(items[0]["id"]?.string, id)
        XCTAssertEqual(items[0]["title"]?.string, "Kitchen")
        XCTAssertEqual(items[0]["message_id"]?.string, user)
        XCTAssertEqual(items[0]["snippet"]?.string,
                       "Is &lt;b&gt;<mark>saffron</mark>&lt;/b&gt; &amp; &quot;vanilla&quot; pricey? &#39;yes&#39;")
        XCTAssertEqual(reply.exact["next_cursor"], .null)
        XCTAssertEqual(reply.exact["order"]?.string, "relevance")
        // A title hit has no message.
        let title = try await parley.call("GET", "/api/conversations?q=Kitch")
        XCTAssertEqual(title.exact["items"]?.array?.first?["message_id"], .null)
        XCTAssertEqual(title.exact["items"]?.array?.first?["snippet"]?.string, "<mark>Kitch</mark>en")
    }

    func testQueryLanguageAndRanking() async throws {
        let parley = try startParley()
        let weak = try await parley.conversation()
        _ = try await parley.send(weak, "one mention of otters among many other words about rivers and lakes")
        let strong = try await parley.conversation()
        _ = try await parley.send(strong, "otters otters otters")
        let cjk = try await parley.conversation()
        _ = try await parley.send(cjk, "今日は東京タワーに行きました")
        func ids(_ query: String) async throws -> [String] {
            let escaped = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query
            let reply = try await parley.call("GET", "/api/conversations?q=\(escaped)")
            XCTAssertEqual(reply.status, 200, "\(query): \(reply.text)")
            return reply.exact["items"]?.array?.compactMap { $0["id"]?.string } ?? []
        }
        let ranked = try await ids("otters")
        XCTAssertEqual(ranked, [strong, weak], "bm25: the denser match first")
        let phrase = try await ids("\"mention of otters\"")
        XCTAssertEqual(phrase, [weak])
        let prefix = try await ids("ott*")
        XCTAssertEqual(Set(prefix), [weak, strong])
        let near = try await ids("NEAR(mention rivers, 60)")
        XCTAssertEqual(near, [weak])
        let tokyo = try await ids("東京タワー")
        XCTAssertEqual(tokyo, [cjk])
        let both = try await ids("otters NOT rivers")
        XCTAssertEqual(both, [strong])
        // Under 3 characters the trigram index cannot help: the text is looked for as it is, newest first.
        let shortCJK = try await ids("東京")
        XCTAssertEqual(shortCJK, [cjk])
        let shortLatin = try await ids("OT")
        XCTAssertEqual(shortLatin.filter { [strong, weak].contains($0) }, [strong, weak], "newest first, ASCII case folded")
        let unsyntactic = try await ids("§")
        XCTAssertEqual(unsyntactic, [], "no query syntax in a short query")
        let marked = try await parley.call("GET", "/api/conversations?q=%E6%9D%B1%E4%BA%AC")
        XCTAssertEqual(marked.exact["order"]?.string, "newest")
        let snippet = marked.exact["items"]?.array?.first?["snippet"]?.string ?? ""
        XCTAssertTrue(snippet.contains("今日は<mark>東京</mark>タワーに行きました"), snippet)
    }

    func testBadQueriesAre400s() async throws {
        let parley = try startParley(["PARLEY_MAX_SEARCH_QUERY_CHARS": "20"])
        _ = try await parley.conversation()
        for (query, code) in [("%28abc", "invalid_query"), ("fox%20AND", "invalid_query"), ("%22open", "invalid_query"),
                              ("nocolumn:fox", "invalid_query"),
                              (String(repeating: "x", count: 21), "query_too_long")] {
            let reply = try await parley.call("GET", "/api/conversations?q=\(query)")
            XCTAssertEqual(reply.status, 400, "\(query): \(reply.text)")
            XCTAssertEqual(reply.errorCode, code, query)
        }
        let cursor = try await parley.call("GET", "/api/conversations?q=abc&cursor=x")
        XCTAssertEqual(cursor.status, 400)
        let flag = try await parley.call("GET", "/api/conversations?q=abc&archived=maybe")
        XCTAssertEqual(flag.status, 400)
        let blank = try await parley.call("GET", "/api/conversations?q=%20%20")
        XCTAssertEqual(blank.status, 200, "a blank query is the plain list")
    }

    func testTeamMembersSearchOnlyTheirOwnConversations() async throws {
        let parley = try startTeamParley()
        let alice = try Team.bearer(parley, "alice")
        let bob = try Team.bearer(parley, "bob")
        let mine = try await parley.conversation(as: alice, ["title": "Quarterly numbers"])
        _ = try await parley.send(as: alice, mine, "the merger codename is heliotrope")
        let theirs = try await parley.conversation(as: bob, ["title": "Quarterly numbers too"])
        _ = try await parley.send(as: bob, theirs, "heliotrope is also here")
        let aliceHits = try await parley.call("GET", "/api/conversations?q=heliotrope", as: alice)
        XCTAssertEqual(aliceHits.items.map { $0["id"] as? String }, [mine])
        let bobHits = try await parley.call("GET", "/api/conversations?q=Quarterly", as: bob)
        XCTAssertEqual(bobHits.items.map { $0["id"] as? String }, [theirs])
        let carol = try Team.bearer(parley, "carol")
        let none = try await parley.call("GET", "/api/conversations?q=heliotrope", as: carol)
        XCTAssertEqual(none.status, 200)
        XCTAssertEqual(none.items.count, 0)
        let anonymous = try await parley.call("GET", "/api/conversations?q=heliotrope")
        XCTAssertEqual(anonymous.status, 401)
    }

    // MARK: - Issue 17: nothing of another user's text

    /// A one-conversation import document whose one user message is `content`.
    private func importDocument(_ content: String, title: String = "Imported") throws -> [UInt8] {
        let message: [String: Any] = [
            "id": "m", "parent_id": NSNull(), "role": "user", "content": content, "reasoning": "", "status": "complete",
            "finish_reason": NSNull(), "model": NSNull(), "usage": NSNull(), "error": NSNull(),
            "created_at": "2026-01-02T03:04:05.678Z", "updated_at": "2026-01-02T03:04:05.678Z"]
        let document: [String: Any] = [
            "parley_export": 1, "title": title, "model": NSNull(), "system_prompt": NSNull(), "pinned": false,
            "archived": false, "current_leaf_id": NSNull(), "created_at": "2026-01-02T03:04:05.678Z",
            "updated_at": "2026-01-02T03:04:05.678Z", "messages": [message]]
        return Array(try JSONSerialization.data(withJSONObject: document))
    }

    /// The ranking probe of the issue, over HTTP: which of the member's two imports ranks first must
    /// not say whether another user wrote the guessed word.
    func testTheOrderOfResultsDoesNotRevealAnotherUsersWords() async throws {
        func probe(victimWritesGuess: Bool) async throws -> [String] {
            let parley = try startTeamParley()
            let mallory = try Team.bearer(parley, "mallory")
            let victim = try Team.bearer(parley, "victim")
            for index in 0..<3 {
                let secret = victimWritesGuess ? "the marmoset project \(index)" : "the other project \(index)"
                let made = try await parley.call("POST", "/api/import", body: try importDocument(secret), headers: [victim])
                XCTAssertEqual(made.status, 201, made.text)
            }
            var titles: [String: String] = [:]
            for (title, text) in [("control", "zz kestrel zz zzz"), ("guess", "zz marmoset")] {
                let made = try await parley.call("POST", "/api/import", body: try importDocument(text, title: title),
                                                 headers: [mallory])
                XCTAssertEqual(made.status, 201, made.text)
                if let id = made.exact["items"]?.array?.first?["id"]?.string { titles[id] = title }
            }
            let hits = try await parley.call("GET", "/api/conversations?q=marmoset%20OR%20kestrel", as: mallory)
            XCTAssertEqual(hits.status, 200, hits.text)
            return hits.items.compactMap { ($0["id"] as? String).flatMap { titles[$0] } }
        }
        let without = try await probe(victimWritesGuess: false)
        let with = try await probe(victimWritesGuess: true)
        XCTAssertEqual(without.count, 2)
        XCTAssertEqual(with, without)
    }

    /// One grapheme cluster of `zq` and 450,000 combining marks: ten such imports once made a page of
    /// ten results 9 MB (each snippet 900,007 bytes). Snippets are bounded in bytes.
    func testSnippetsAreBoundedInBytesWhateverTheGraphemeClusters() async throws {
        let parley = try startParley(["PARLEY_MAX_BODY_BYTES": String(2 << 20)])
        let monster = "zq" + String(repeating: "\u{0301}", count: 450_000) + " tail"
        for _ in 0..<10 {
            let made = try await parley.call("POST", "/api/import", body: try importDocument(monster))
            XCTAssertEqual(made.status, 201, made.text)
        }
        let reply = try await parley.call("GET", "/api/conversations?q=zq&limit=10")
        XCTAssertEqual(reply.status, 200, reply.text)
        let items = try XCTUnwrap(reply.exact["items"]?.array)
        XCTAssertEqual(items.count, 10)
        for item in items {
            let snippet = try XCTUnwrap(item["snippet"]?.string)
            // Escaped HTML with <mark>: the text part is at most 512 bytes, the marks add 13 bytes.
            XCTAssertLessThanOrEqual(snippet.utf8.count, 512 + 13, "\(snippet.utf8.count) bytes")
            // (No mark: as a string of characters, "zq" is not in "z" + "q" with its marks.)
            XCTAssertTrue(snippet.unicodeScalars.starts(with: "zq\u{0301}".unicodeScalars), String(snippet.prefix(20)))
        }
        XCTAssertLessThan(reply.text.utf8.count, 20_000, "the whole page stays small")
    }
}
