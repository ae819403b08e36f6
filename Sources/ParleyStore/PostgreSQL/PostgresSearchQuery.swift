/// A search query in FTS5's syntax, the one `Store.search` takes, parsed for PostgreSQL, where no FTS5
/// reads it: the same queries are accepted and refused (`invalidQuery`), and each phrase is what it is
/// on SQLite's trigram index, a substring without case (see `PostgresSearchSQL` for the mapping).
///
/// The grammar is FTS5's ("Full-text Query Syntax"): strings (barewords or `"quoted"` with `""` for a
/// quote), `*` after a string, `+` between strings, `^` before a phrase, `NEAR(phrase phrase …, N)`,
/// `column:` and `-{columns}:` filters (the one column is `body`), parentheses, and `NOT` over `AND`
/// (or two queries side by side) over `OR`. Checked against SQLite 3.40's FTS5 with the trigram tokenizer.
struct PostgresSearchQuery: Sendable, Equatable {
    /// One phrase. `text` is the substring it matches; nil when it can match nothing: fewer than 3
    /// characters (no trigram), or `a + b` whose pieces cannot meet as consecutive trigrams.
    struct Phrase: Sendable, Equatable {
        var text: String?
        /// `^`: only at the start of the text.
        var initial = false
    }

    indirect enum Node: Sendable, Equatable {
        case phrase(Phrase)
        case near([Phrase], distance: Int)
        case and(Node, Node)
        case or(Node, Node)
        case not(Node, Node)
        /// A column filter that leaves out `body`: no row.
        case nothing
    }

    let root: Node
    /// Every phrase in the query's order (FTS5's phrase numbers), for `MatchCounts`.
    let phrases: [Phrase]

    /// FTS5's default NEAR distance.
    static let defaultNearDistance = 10
    /// The only column of the search index.
    static let column = "body"

    /// Parses `query`; throws `invalidQuery` where FTS5 refuses it.
    init(_ query: String) throws(StoreError) {
        var parser = PostgresSearchQueryParser(PostgresSearchQueryLexer.tokens(of: query))
        root = try parser.parseQuery()
        phrases = parser.phrases
    }

    /// What `parley_match_counts` answers for a matching row whose indexed text is `body`: its
    /// length in trigrams and, for each phrase, how often it occurs (overlapping occurrences too).
    func counts(in body: String) -> MatchCounts {
        let text = Array(body.lowercased().unicodeScalars)
        return MatchCounts(length: max(text.count - 2, 0), phrases: phrases.map { phrase in
            guard let wanted = phrase.text.map({ Array($0.lowercased().unicodeScalars) }), !wanted.isEmpty,
                  wanted.count <= text.count else { return 0 }
            let starts = phrase.initial ? 0...0 : 0...(text.count - wanted.count)
            return starts.count { start in text[start..<(start + wanted.count)].elementsEqual(wanted) }
        })
    }
}
