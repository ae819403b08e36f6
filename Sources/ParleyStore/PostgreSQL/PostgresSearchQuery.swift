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
        /// A column filter that leaves out `body`: no row (its phrases keep their numbers).
        case excluded(Node)
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
    /// length in trigrams and, for each phrase, how often it occurs (overlapping occurrences too),
    /// counted only where its part of the query matches the row, as FTS5 reports instances.
    func counts(in body: String) -> MatchCounts {
        let text = Array(body.lowercased().unicodeScalars)
        return MatchCounts(length: max(text.count - 2, 0), phrases: Self.evaluate(root, in: text).counts)
    }

    /// Whether `node` matches `text` (lower-cased), and its phrases' counts (zeros where it does not).
    private static func evaluate(_ node: Node, in text: [Unicode.Scalar]) -> (matches: Bool, counts: [Int]) {
        switch node {
        case .phrase(let phrase):
            let count = starts(of: phrase, in: text).count
            return (count > 0, [count])
        case .near(let phrases, let distance):
            let found = phrases.map { starts(of: $0, in: text) }
            let lengths = phrases.map { ($0.text?.unicodeScalars.count ?? 0) - 2 }
            // fts5ExprNearIsMatch: some start q of a phrase such that every phrase i starts at a p with
            // q - (its tokens) - distance <= p <= q.
            let matches = found.joined().contains { q in
                found.indices.allSatisfy { i in found[i].contains { $0 <= q && $0 >= q - lengths[i] - distance } }
            }
            return (matches, matches ? found.map(\.count) : Array(repeating: 0, count: phrases.count))
        case .and(let left, let right):
            let (l, r) = (evaluate(left, in: text), evaluate(right, in: text))
            let matches = l.matches && r.matches
            return (matches, matches ? l.counts + r.counts : zeros(l, r))
        case .or(let left, let right):
            let (l, r) = (evaluate(left, in: text), evaluate(right, in: text))
            return (l.matches || r.matches, (l.matches ? l.counts : zeros(l)) + (r.matches ? r.counts : zeros(r)))
        case .not(let left, let right):
            let (l, r) = (evaluate(left, in: text), evaluate(right, in: text))
            let matches = l.matches && !r.matches
            return (matches, (matches ? l.counts : zeros(l)) + zeros(r))
        case .excluded(let inner):
            return (false, zeros(evaluate(inner, in: text)))
        }
    }

    private static func zeros(_ parts: (matches: Bool, counts: [Int])...) -> [Int] {
        Array(repeating: 0, count: parts.reduce(0) { $0 + $1.counts.count })
    }

    /// Where `phrase` starts in `text` (character offsets, overlapping occurrences too, without case).
    private static func starts(of phrase: Phrase, in text: [Unicode.Scalar]) -> [Int] {
        guard let wanted = phrase.text.map({ Array($0.lowercased().unicodeScalars) }), !wanted.isEmpty,
              wanted.count <= text.count else { return [] }
        let candidates = phrase.initial ? 0...0 : 0...(text.count - wanted.count)
        return candidates.filter { start in text[start..<(start + wanted.count)].elementsEqual(wanted) }
    }
}
