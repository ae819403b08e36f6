import CSQLite

extension Store {
    // MARK: - Searching

    /// The owner's conversations whose title or finished messages match the FTS5 `query`, best first
    /// (bm25 of each conversation's best match), at most `limit` (cut to 1...`maxPageSize`). `pinned`
    /// and `archived` filter as in `listConversations` (archived ones are left out unless asked for).
    /// Only the newest `candidates` matching documents are ranked: bm25 costs a few microseconds per
    /// match, so a word found in half of 100,000 messages would otherwise cost 200 ms, and the newest
    /// matches of so broad a query are the likeliest ones. Text is indexed as trigrams (migration 6),
    /// so a term of fewer than 3 characters matches nothing. Throws `invalidQuery` when FTS5 cannot
    /// parse the query. One read transaction.
    public func search(
        _ query: String, ownedBy owner: String = User.localID, limit: Int = Store.defaultPageSize,
        pinned: Bool? = nil, archived: Bool? = false, candidates: Int = Store.defaultSearchCandidates
    ) throws(StoreError) -> [SearchHit] {
        let count = min(max(limit, 1), configuration.maxPageSize)
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
}
