/// The SQL of `Store.search` on PostgreSQL (migration 3's `search_documents` and `search_index`),
/// giving the same hits, order and snippets as FTS5 gives on SQLite for the same rows.
///
/// How FTS5's semantics map:
/// - **Tokens.** SQLite indexes every 3 characters of the text, spaces included, without case, each
///   prefixed by the owner (`OwnedTrigramTokenizer`). Here `search_index.trigrams` holds the same
///   owned trigrams (`parley_search_trigrams`) under a GIN index: a posting list holds one owner's
///   rows, so the walk, its cost and the order depend on the owner's rows alone (issue 17).
/// - **Phrases.** On trigrams an FTS5 phrase (bareword, `"quoted"`, `abc*`) matches where its text
///   occurs without case: here `trigrams @> parley_search_trigrams(owner, phrase)` finds candidates
///   through the index and `strpos(lower(body), lower(phrase)) > 0` checks them. A phrase of fewer
///   than 3 characters has no trigram and matches nothing (as in FTS5); `^` is `starts_with`;
///   `NEAR(…, N)` is `parley_search_near` (FTS5's rule, on character offsets); `AND`, `OR`, `NOT`
///   and parentheses are SQL's. `PostgresSearchQuery` parses the query, refusing what FTS5 refuses.
/// - **Order.** `doc_id` grows like FTS5's rowid, so "newest first" is `doc_id DESC`, with the same
///   budget + 1 cut. BM25 is `SearchRanking`'s, over the counts `PostgresSearchQuery.counts(in:)`
///   makes from each candidate's body (what `parley_match_counts` answers on SQLite).
/// - **Snippets.** `SearchSnippet.make` over `search_index.body` (the indexed copy, marks removed),
///   as on SQLite; the match query returns that body, so no second read is needed.
/// - **Short queries** (under 3 characters) scan the owner's documents newest first, led by
///   `search_documents_owner`, with SQLite's `lower()`, which folds ASCII letters only.
/// Why not `tsvector` or `pg_trgm`: a tsvector is capped at 1 MB (one long CJK reply's owned
/// trigrams pass that), and its parser splits words where FTS5's trigrams span spaces; pg_trgm's
/// trigrams are per word too, and its posting lists hold every user's rows, so the cost of a search
/// would depend on other users' text. Both extensions are trusted in PostgreSQL 15, but neither is
/// needed.
enum PostgresSearchSQL {
    /// The owner's matching documents, newest first: `?1` unused (the query is in the condition),
    /// `?2` owner, `?3` pinned or NULL, `?4` archived or NULL, `?5` the limit (budget + 1); the
    /// condition's phrases from `?6` on (`condition(for:)`). Columns: conversation id, message id or
    /// NULL, doc id, the indexed body (for `counts(in:)` and the snippet).
    /// The match is led by the owned trigrams' GIN lists (a materialized step the planner cannot fold
    /// into another walk), so the rows it handles are the owner's matches, then each is looked up by key.
    static func matchSQL(condition: String) -> String {
        """
        WITH matched AS MATERIALIZED (
            SELECT i.doc_id, i.body FROM search_index i WHERE (\(condition)) AND ?1::TEXT IS NOT NULL
        )
        SELECT d.conversation_id, d.message_id, d.doc_id, i.body
        FROM matched i
        JOIN search_documents d ON d.doc_id = i.doc_id
        JOIN conversations c ON c.id = d.conversation_id
        WHERE d.owner_id = ?2 AND c.owner_id = ?2
          AND (c.pinned = ?3 OR ?3 IS NULL) AND (c.archived = ?4 OR ?4 IS NULL)
        ORDER BY d.doc_id DESC LIMIT ?5
        """
    }

    /// Set in the search's read transaction before the match (issue 17's rule on cost): with only index
    /// plans and nested loops left, the walk starts from the owner's rows (`search_documents_owner`, or
    /// the owned trigrams' GIN lists) and looks the rest up by key, so the rows it handles are the
    /// owner's whatever the other users' tables hold. Without it the planner, from statistics of every
    /// user's rows, chose a sequential scan of `conversations` beside a small table and a hash join
    /// over every document beside a large one: the plan, and its work, followed other users' rows.
    static let ownerLedPlans = "SET LOCAL enable_seqscan = off; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off"

    /// The first parameter number `condition(for:)` uses.
    static let firstConditionParameter = 6

    /// The indexed copy of one document, for its snippet (SQLite: the FTS5 row without its owner).
    static let bodySQL = "SELECT body FROM search_index WHERE doc_id = ?"

    /// `substringSearch` on PostgreSQL: `instr` is `strpos`, and `lower` folds ASCII letters only, as
    /// SQLite's does (`translate`), so a short query finds what it finds there. Same parameters.
    static let substringSQL = """
        SELECT d.conversation_id, d.message_id, coalesce(m.content, c.title)
        FROM search_documents d
        JOIN conversations c ON c.id = d.conversation_id
        LEFT JOIN messages m ON m.id = d.message_id
        WHERE d.owner_id = ?2 AND c.owner_id = ?2 AND (c.pinned = ?3 OR ?3 IS NULL) AND (c.archived = ?4 OR ?4 IS NULL)
          AND strpos(translate(coalesce(m.content, c.title), '\(upper)', '\(lower)'),
                     translate(?1, '\(upper)', '\(lower)')) > 0
        ORDER BY d.doc_id DESC LIMIT ?5
        """

    private static let upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    private static let lower = "abcdefghijklmnopqrstuvwxyz"

    /// The WHERE condition of `query` over `i` (search_index) for owner `?2`, and its arguments,
    /// numbered from `firstConditionParameter`. Values are always bound, never spliced.
    static func condition(for query: PostgresSearchQuery) -> (sql: String, arguments: [SQLValue]) {
        var arguments: [SQLValue] = []
        func bind(_ value: SQLValue) -> String {
            arguments.append(value)
            return "?\(firstConditionParameter + arguments.count - 1)"
        }
        func phrase(_ phrase: PostgresSearchQuery.Phrase) -> String {
            guard let text = phrase.text else { return "FALSE" }
            let parameter = bind(.text(text))
            let check = phrase.initial
                ? "starts_with(lower(i.body), lower(\(parameter)))"
                : "strpos(lower(i.body), lower(\(parameter))) > 0"
            return "(i.trigrams @> parley_search_trigrams(?2, \(parameter)) AND \(check))"
        }
        func sql(_ node: PostgresSearchQuery.Node) -> String {
            switch node {
            case .phrase(let single):
                return phrase(single)
            case .near(let phrases, let distance):
                guard phrases.allSatisfy({ $0.text != nil }) else { return "FALSE" }
                let each = phrases.map(phrase).joined(separator: " AND ")
                let texts = phrases.compactMap(\.text).map { bind(.text($0)) + "::TEXT" }.joined(separator: ", ")
                return "(\(each) AND parley_search_near(i.body, ARRAY[\(texts)], \(bind(.integer(Int64(distance))))::BIGINT))"
            case .and(let left, let right):
                return "(\(sql(left)) AND \(sql(right)))"
            case .or(let left, let right):
                return "(\(sql(left)) OR \(sql(right)))"
            case .not(let left, let right):
                return "(\(sql(left)) AND NOT \(sql(right)))"
            case .excluded:
                return "FALSE"
            }
        }
        let text = sql(query.root)
        return (text, arguments)
    }
}
