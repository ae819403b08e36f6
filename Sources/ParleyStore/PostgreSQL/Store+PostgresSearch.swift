extension Store {
    /// `search` on PostgreSQL (`PostgresSearchSQL` says how FTS5's semantics map): the owner's newest
    /// matches, budget + 1 of them, ranked by `SearchRanking` when they are few enough, one hit per
    /// conversation, snippets from the indexed copy. Throws `invalidQuery` where FTS5 would. Runs
    /// inside the caller's read; `filters` are `search`'s first four arguments.
    func postgresSearch(
        _ database: any Database, query: String, filters: [SQLValue], count: Int, budget: Int
    ) throws(StoreError) -> SearchResults {
        let parsed = try PostgresSearchQuery(query)
        let condition = PostgresSearchSQL.condition(for: parsed)
        var bodies: [Int64: String] = [:]
        let newest = try database.query(
            PostgresSearchSQL.matchSQL(condition: condition.sql),
            filters + [.integer(Int64(budget + 1))] + condition.arguments
        ) { row in
            let body = row.text(3)
            bodies[row.int64(2)] = body
            return SearchRanking.Candidate(doc: row.int64(2), conversationID: row.text(0), messageID: row.optionalText(1),
                                           counts: parsed.counts(in: body))
        }
        let best: [SearchRanking.Candidate]
        let order: SearchResults.Order
        if newest.count > budget {
            var seen: Set<String> = []
            best = Array(newest.filter { seen.insert($0.conversationID).inserted }.prefix(count))
            order = .newest
        } else {
            best = SearchRanking(candidates: newest).best(limit: count)
            order = .relevance
        }
        let terms = SearchSnippet.terms(of: query)
        var hits: [SearchHit] = []
        for match in best {
            let conversation = try database.queryFirst(
                "SELECT \(Conversation.columns) FROM conversations WHERE id = ?",
                [.text(match.conversationID)], Conversation.init(row:))
            guard let conversation else { continue }
            hits.append(SearchHit(conversation: conversation, messageID: match.messageID,
                                  snippet: SearchSnippet.make(terms: terms, in: bodies[match.doc] ?? "")))
        }
        return SearchResults(hits: hits, order: order)
    }
}
