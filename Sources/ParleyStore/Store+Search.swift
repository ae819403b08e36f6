import CSQLite
import Foundation

extension Store {
    // MARK: - Searching

    /// The owner's conversations whose title or finished messages match the FTS5 `query`, best first
    /// (bm25 of each conversation's best match), at most `limit` (cut to 1...`maxPageSize`). `pinned`
    /// and `archived` filter as in `listConversations` (archived ones are left out unless asked for).
    /// Only the newest `candidates` matching documents are ranked: bm25 costs a few microseconds per
    /// match, so a word found in half of 100,000 messages would otherwise cost 200 ms, and the newest
    /// matches of so broad a query are the likeliest ones. Text is indexed as trigrams (migration 6),
    /// so a term of fewer than 3 characters matches nothing in FTS5: a whole query that short
    /// (`東京`, `go`) is searched as plain text instead (`substringSearch`). Throws `invalidQuery`
    /// when FTS5 cannot parse the query. One read transaction.
    public func search(
        _ query: String, ownedBy owner: String = User.localID, limit: Int = Store.defaultPageSize,
        pinned: Bool? = nil, archived: Bool? = false, candidates: Int = Store.defaultSearchCandidates
    ) throws(StoreError) -> [SearchHit] {
        let count = min(max(limit, 1), configuration.maxPageSize)
        let text = query.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.unicodeScalars.count < Self.trigramLength {
            return try substringSearch(text, ownedBy: owner, limit: count, pinned: pinned, archived: archived,
                                       candidates: candidates)
        }
        do {
            return try read { (database) throws(StoreError) in
                // The best match of each conversation, then the best conversations.
                let best = try database.query(
                    """
                    SELECT conversation_id, message_id, doc FROM (
                        SELECT conversation_id, message_id, doc, score,
                               row_number() OVER (PARTITION BY conversation_id ORDER BY score) AS place
                        FROM (
                            -- FTS5 walks its matches newest rowid first and stops at the limit, so
                            -- rank (bm25) is computed for at most ?6 of the owner's documents.
                            SELECT d.conversation_id, d.message_id, search_index.rowid AS doc,
                                   search_index.rank AS score
                            FROM search_index
                            JOIN search_documents d ON d.doc_id = search_index.rowid
                            JOIN conversations c ON c.id = d.conversation_id
                            WHERE search_index MATCH ?1 AND c.owner_id = ?2
                              AND (?3 IS NULL OR c.pinned = ?3) AND (?4 IS NULL OR c.archived = ?4)
                            ORDER BY search_index.rowid DESC LIMIT ?6
                        )
                    )
                    WHERE place = 1 ORDER BY score LIMIT ?5
                    """,
                    [.text(query), .text(owner), pinned.map(SQLValue.bool) ?? .null,
                     archived.map(SQLValue.bool) ?? .null, .integer(Int64(count)), .integer(Int64(max(candidates, 1)))]
                ) { row in (conversationID: row.text(0), messageID: row.optionalText(1), doc: row.int64(2)) }
                var hits: [SearchHit] = []
                for match in best {
                    // snippet() needs the MATCH; the rowid picks the one document.
                    let snippet = try database.queryFirst(
                        """
                        SELECT snippet(search_index, 0, char(57344), char(57345), '…', 64)
                        FROM search_index WHERE search_index MATCH ?1 AND rowid = ?2
                        """,
                        [.text(query), .integer(match.doc)]) { row in row.text(0) } ?? ""
                    let conversation = try database.queryFirst(
                        "SELECT \(Conversation.columns) FROM conversations WHERE id = ?",
                        [.text(match.conversationID)], Conversation.init(row:))
                    guard let conversation else { continue }
                    hits.append(SearchHit(conversation: conversation, messageID: match.messageID, snippet: snippet))
                }
                return hits
            }
        } catch {
            // The statements are prepared (so the SQL is sound): a plain SQLITE_ERROR while stepping is
            // FTS5 refusing the query ("fts5: syntax error near ...", "unterminated string",
            // "no such column: x" for an unknown `column:` filter).
            if case .sqlite(let code, let message) = error, code & 0xff == SQLITE_ERROR {
                throw StoreError.invalidQuery(message)
            }
            throw error
        }
    }

    // MARK: - Short queries

    /// The trigram tokenizer's term length: shorter queries cannot use the index.
    static let trigramLength = 3

    /// A query too short for the trigram index, found as a substring (ASCII letters without case)
    /// of the owner's newest `candidates` matching titles and finished messages, newest first, one hit
    /// per conversation. No query syntax: the text is looked for as it is. The scan walks the
    /// documents newest first and stops at `candidates` matches, so a common letter costs little and
    /// a rare pair of characters costs one pass over the owner's documents. Runs inside a read.
    private func substringSearch(
        _ text: String, ownedBy owner: String, limit: Int, pinned: Bool?, archived: Bool?, candidates: Int
    ) throws(StoreError) -> [SearchHit] {
        guard !text.isEmpty else { return [] }
        return try read { (database) throws(StoreError) in
            let matches = try database.query(
                """
                SELECT d.conversation_id, d.message_id, coalesce(m.content, c.title)
                FROM search_documents d
                JOIN conversations c ON c.id = d.conversation_id
                LEFT JOIN messages m ON m.id = d.message_id
                WHERE c.owner_id = ?2 AND (?3 IS NULL OR c.pinned = ?3) AND (?4 IS NULL OR c.archived = ?4)
                  AND instr(lower(coalesce(m.content, c.title)), lower(?1)) > 0
                ORDER BY d.doc_id DESC LIMIT ?5
                """,
                [.text(text), .text(owner), pinned.map(SQLValue.bool) ?? .null, archived.map(SQLValue.bool) ?? .null,
                 .integer(Int64(max(candidates, 1)))]
            ) { row in (conversationID: row.text(0), messageID: row.optionalText(1), body: row.text(2)) }
            var hits: [SearchHit] = []
            var seen: Set<String> = []
            for match in matches where hits.count < limit && seen.insert(match.conversationID).inserted {
                let conversation = try database.queryFirst(
                    "SELECT \(Conversation.columns) FROM conversations WHERE id = ?",
                    [.text(match.conversationID)], Conversation.init(row:))
                guard let conversation else { continue }
                hits.append(SearchHit(conversation: conversation, messageID: match.messageID,
                                      snippet: Self.snippet(of: text, in: match.body)))
            }
            return hits
        }
    }

    /// About 60 characters of `body` around the first occurrence of `text`, every occurrence in it
    /// between the match marks, `…` where it was cut (what FTS5's snippet() gives for the index).
    static func snippet(of text: String, in body: String) -> String {
        let clean = String(String.UnicodeScalarView(body.unicodeScalars.filter {
            $0 != SearchHit.matchStart && $0 != SearchHit.matchEnd
        }))
        guard let first = clean.range(of: text, options: [.caseInsensitive]) else {
            return String(clean.prefix(60)) + (clean.count > 60 ? "…" : "")
        }
        let start = clean.index(first.lowerBound, offsetBy: -24, limitedBy: clean.startIndex) ?? clean.startIndex
        let end = clean.index(first.upperBound, offsetBy: 36, limitedBy: clean.endIndex) ?? clean.endIndex
        var out = start == clean.startIndex ? "" : "…"
        var cursor = start
        while cursor < end, let found = clean.range(of: text, options: [.caseInsensitive], range: cursor..<end) {
            out += clean[cursor..<found.lowerBound]
            out.unicodeScalars.append(SearchHit.matchStart)
            out += clean[found]
            out.unicodeScalars.append(SearchHit.matchEnd)
            cursor = found.upperBound
        }
        out += clean[cursor..<end]
        return out + (end == clean.endIndex ? "" : "…")
    }
}
