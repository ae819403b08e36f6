import CSQLite
import Foundation

extension Store {
    // MARK: - Searching

    /// The owner's conversations whose title or finished messages match the FTS5 `query`, at most
    /// `limit` (cut to 1...`maxPageSize`), one hit per conversation. `pinned` and `archived` filter as
    /// in `listConversations` (archived ones are left out unless asked for).
    ///
    /// Only the owner's rows are walked: every indexed trigram carries its owner
    /// (`OwnedTrigramTokenizer`, migration 8), so neither the results, their order nor the query's
    /// work depend on another user's text.
    ///
    /// Order: BM25 of each conversation's best match, computed over the owner's matching rows alone
    /// (`SearchRanking`), when the owner has at most `candidates` matching documents; more are
    /// answered newest first, from a walk that stops after `candidates + 1` matches
    /// (`SearchResults.order` says which). Text is indexed as trigrams, so a term of fewer than 3
    /// characters matches nothing in FTS5: a whole query that short (`東京`, `go`) is searched as
    /// plain text instead (`substringSearch`). Throws `invalidQuery` when FTS5 cannot parse the
    /// query. One read transaction.
    public func search(
        _ query: String, ownedBy owner: String = User.localID, limit: Int = Store.defaultPageSize,
        pinned: Bool? = nil, archived: Bool? = false, candidates: Int = Store.defaultSearchCandidates
    ) throws(StoreError) -> SearchResults {
        let count = min(max(limit, 1), configuration.maxPageSize)
        let budget = max(candidates, 1)
        let text = query.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.unicodeScalars.count < Self.trigramLength {
            return SearchResults(hits: try substringSearch(text, ownedBy: owner, limit: count, pinned: pinned,
                                                          archived: archived, candidates: budget),
                                 order: .newest)
        }
        let filters: [SQLValue] = [.text(query), .text(owner), pinned.map(SQLValue.bool) ?? .null,
                                   archived.map(SQLValue.bool) ?? .null]
        do {
            return try read { (connection) throws(StoreError) in
                // The owner's newest matches, one more than the budget, each with the counts BM25 needs.
                let found = if let database = connection as? SQLiteDatabase {
                    try Self.sqliteMatches(query, filters: filters, limit: budget + 1, owner: owner, database)
                } else {
                    try Self.postgresMatches(query, filters: filters, limit: budget + 1, connection)
                }
                let newest = found.candidates
                let best: [SearchRanking.Candidate]
                let order: SearchResults.Order
                if newest.count > budget {
                    var seen: Set<String> = []
                    best = Array(newest.filter { seen.insert($0.conversationID).inserted }.prefix(count))
                    order = .newest
                } else {
                    // Few enough to rank: BM25 over these rows, the best of each conversation first.
                    best = SearchRanking(candidates: newest).best(limit: count)
                    order = .relevance
                }
                var hits: [SearchHit] = []
                let terms = SearchSnippet.terms(of: query)
                for match in best {
                    // PostgreSQL's match read the body already; on SQLite, the indexed copy by rowid (no
                    // MATCH: see SearchSnippet), without its owner.
                    let body = if let read = found.bodies[match.doc] { read } else {
                        try connection.queryFirst(
                            "SELECT substr(body, instr(body, char(31)) + 1) FROM search_index WHERE rowid = ?",
                            [.integer(match.doc)]) { row in row.text(0) } ?? ""
                    }
                    let snippet = SearchSnippet.make(terms: terms, in: body)
                    let conversation = try connection.queryFirst(
                        "SELECT \(Conversation.columns) FROM conversations WHERE id = ?",
                        [.text(match.conversationID)], Conversation.init(row:))
                    guard let conversation else { continue }
                    hits.append(SearchHit(conversation: conversation, messageID: match.messageID, snippet: snippet))
                }
                return SearchResults(hits: hits, order: order, steps: found.steps)
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

    /// What one engine's match finds: candidates newest first, the indexed bodies when the match read
    /// them already (PostgreSQL), and the work it took (SQLite's virtual machine steps; 0 on PostgreSQL).
    private struct Matches {
        var candidates: [SearchRanking.Candidate]
        var bodies: [Int64: String]
        var steps: Int
    }

    /// FTS5's MATCH. It finds the owner's rows only (`OwnedTrigramTokenizer`), so its work and its order
    /// depend on the owner's text alone. FTS5 walks rowids newest first and stops at the limit.
    private static func sqliteMatches(
        _ query: String, filters: [SQLValue], limit: Int, owner: String, _ database: SQLiteDatabase
    ) throws(StoreError) -> Matches {
        database.search.queryOwner = owner
        defer { database.search.queryOwner = nil }
        let candidates = try database.query(matchSQL, filters + [.integer(Int64(limit))]) { row in
            SearchRanking.Candidate(doc: row.int64(2), conversationID: row.text(0), messageID: row.optionalText(1),
                                    counts: MatchCounts(row.text(3)) ?? MatchCounts(length: 0, phrases: []))
        }
        return Matches(candidates: candidates, bodies: [:], steps: database.virtualMachineSteps(matchSQL))
    }

    /// The same match on PostgreSQL (`PostgresSearchSQL`): the query parsed as FTS5 parses it, its
    /// phrases looked up in the owner's trigrams, the counts made from each candidate's body.
    private static func postgresMatches(
        _ query: String, filters: [SQLValue], limit: Int, _ database: any Database
    ) throws(StoreError) -> Matches {
        let parsed = try PostgresSearchQuery(query)
        let condition = PostgresSearchSQL.condition(for: parsed)
        var bodies: [Int64: String] = [:]
        try database.execute(PostgresSearchSQL.ownerLedPlans)
        let candidates = try database.query(
            PostgresSearchSQL.matchSQL(condition: condition.sql),
            filters + [.integer(Int64(limit))] + condition.arguments
        ) { row in
            let body = row.text(3)
            bodies[row.int64(2)] = body
            return SearchRanking.Candidate(doc: row.int64(2), conversationID: row.text(0), messageID: row.optionalText(1),
                                           counts: parsed.counts(in: body))
        }
        return Matches(candidates: candidates, bodies: bodies, steps: 0)
    }

    /// The owner's matching documents, newest first, with the counts `SearchRanking` scores.
    private static let matchSQL = """
        SELECT d.conversation_id, d.message_id, search_index.rowid, parley_match_counts(search_index)
        FROM search_index
        JOIN search_documents d ON d.doc_id = search_index.rowid
        JOIN conversations c ON c.id = d.conversation_id
        WHERE search_index MATCH ?1 AND c.owner_id = ?2
          AND (c.pinned = ?3 OR ?3 IS NULL) AND (c.archived = ?4 OR ?4 IS NULL)
        ORDER BY search_index.rowid DESC LIMIT ?5
        """

    // MARK: - Short queries

    /// The trigram tokenizer's term length: shorter queries cannot use the index.
    static let trigramLength = 3

    /// `substringSearch`'s scan on SQLite.
    private static let substringSQL = """
        SELECT d.conversation_id, d.message_id, coalesce(m.content, c.title)
        FROM search_documents d INDEXED BY search_documents_owner
        JOIN conversations c ON c.id = d.conversation_id
        LEFT JOIN messages m ON m.id = d.message_id
        WHERE d.owner_id = ?2 AND c.owner_id = ?2 AND (c.pinned = ?3 OR ?3 IS NULL) AND (c.archived = ?4 OR ?4 IS NULL)
          AND instr(lower(coalesce(m.content, c.title)), lower(?1)) > 0
        ORDER BY d.doc_id DESC LIMIT ?5
        """

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
            let sql = database.dialect == .postgres ? PostgresSearchSQL.substringSQL : Self.substringSQL
            if database.dialect == .postgres { try database.execute(PostgresSearchSQL.ownerLedPlans) }
            let matches = try database.query(
                sql,
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
                                      snippet: SearchSnippet.make(terms: [text], in: match.body)))
            }
            return hits
        }
    }
}
