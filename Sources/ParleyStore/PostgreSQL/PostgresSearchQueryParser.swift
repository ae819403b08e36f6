/// The recursive descent over `PostgresSearchQueryLexer`'s tokens that builds the query's nodes.
struct PostgresSearchQueryParser {
    private var tokens: [PostgresSearchQueryLexer.Token]
    private var index = 0
    private(set) var phrases: [PostgresSearchQuery.Phrase] = []

    init(_ tokens: [PostgresSearchQueryLexer.Token]) {
        self.tokens = tokens
    }

    private var next: PostgresSearchQueryLexer.Token { index < tokens.count ? tokens[index] : .end }

    private func peek(_ offset: Int) -> PostgresSearchQueryLexer.Token {
        index + offset < tokens.count ? tokens[index + offset] : .end
    }

    private mutating func take() -> PostgresSearchQueryLexer.Token {
        defer { index += 1 }
        return next
    }

    private func syntaxError() -> StoreError {
        .invalidQuery("fts5: syntax error near \"\(next.text)\"")
    }

    mutating func parseQuery() throws(StoreError) -> PostgresSearchQuery.Node {
        let node = try parseOr()
        guard next == .end else { throw syntaxError() }
        return node
    }

    private mutating func parseOr() throws(StoreError) -> PostgresSearchQuery.Node {
        var node = try parseAnd()
        while next == .word("OR") {
            index += 1
            node = .or(node, try parseAnd())
        }
        return node
    }

    private mutating func parseAnd() throws(StoreError) -> PostgresSearchQuery.Node {
        var node = try parseNot()
        while true {
            if next == .word("AND") {
                index += 1
            } else if !startsUnary {
                return node
            }
            node = .and(node, try parseNot())
        }
    }

    private mutating func parseNot() throws(StoreError) -> PostgresSearchQuery.Node {
        var node = try parseUnary()
        while next == .word("NOT") {
            index += 1
            node = .not(node, try parseUnary())
        }
        return node
    }

    /// Whether the next token begins a query (two side by side are an AND).
    private var startsUnary: Bool {
        switch next {
        case .word(let word): !["AND", "OR", "NOT"].contains(word)
        case .quoted, .open, .caret, .minus, .openBrace: true
        default: false
        }
    }

    private mutating func parseUnary() throws(StoreError) -> PostgresSearchQuery.Node {
        switch next {
        case .minus, .openBrace:
            return try parseFiltered()
        case .word where peek(1) == .colon:
            return try parseFiltered()
        case .open:
            index += 1
            let node = try parseOr()
            guard take() == .close else { index -= 1; throw syntaxError() }
            return node
        case .word("NEAR") where peek(1) == .open:
            index += 2
            return try parseNear()
        case .caret:
            index += 1
            return .phrase(try parsePhrase(initial: true))
        case .word(let word) where !["AND", "OR", "NOT"].contains(word):
            return .phrase(try parsePhrase(initial: false))
        case .quoted:
            return .phrase(try parsePhrase(initial: false))
        default:
            throw syntaxError()
        }
    }

    /// `[-] column : query` or `[-] {columns} : query`.
    private mutating func parseFiltered() throws(StoreError) -> PostgresSearchQuery.Node {
        let excluded = next == .minus
        if excluded { index += 1 }
        var columns: [String] = []
        if next == .openBrace {
            index += 1
            while case .word(let name) = next {
                columns.append(name)
                index += 1
            }
            guard take() == .closeBrace else { index -= 1; throw syntaxError() }
        } else if case .word(let name) = next {
            columns.append(name)
            index += 1
        } else {
            throw syntaxError()
        }
        if let unknown = columns.first(where: { $0.lowercased() != PostgresSearchQuery.column }) {
            throw StoreError.invalidQuery("no such column: \(unknown)")
        }
        guard take() == .colon else { index -= 1; throw syntaxError() }
        let node = try parseUnary()
        return excluded == columns.isEmpty ? node : .excluded(node)
    }

    /// `NEAR(` already taken: phrases, then `, N` or nothing, then `)`.
    private mutating func parseNear() throws(StoreError) -> PostgresSearchQuery.Node {
        var near: [PostgresSearchQuery.Phrase] = []
        while next.isString {
            near.append(try parsePhrase(initial: false))
        }
        guard !near.isEmpty else { throw syntaxError() }
        var distance = PostgresSearchQuery.defaultNearDistance
        if next == .comma {
            index += 1
            guard case .word(let word) = next else { throw syntaxError() }
            guard let number = Int(word), number >= 0 else {
                throw StoreError.invalidQuery("expected integer, got \"\(word)\"")
            }
            distance = number
            index += 1
        }
        guard take() == .close else { index -= 1; throw syntaxError() }
        return near.count == 1 ? .phrase(near[0]) : .near(near, distance: distance)
    }

    /// `string [*] (+ string [*])*`. FTS5 tokenizes each string apart and wants the tokens in a row:
    /// with trigrams, a string of fewer than 3 characters has none, and `a + b` meets only where a's
    /// last two characters are b's first two (`abcd + cdef` is `abcdef`).
    private mutating func parsePhrase(initial: Bool) throws(StoreError) -> PostgresSearchQuery.Phrase {
        var pieces: [String] = []
        repeat {
            if !pieces.isEmpty { index += 1 }  // the `+`
            guard next.isString else { throw syntaxError() }
            pieces.append(take().text)
            if next == .star { index += 1 }  // a prefix: a whole trigram is its own prefix
        } while next == .plus
        var text: String?
        var impossible = false
        for piece in pieces.map({ Array($0.unicodeScalars) }) where piece.count >= 3 {
            guard let sofar = text.map({ Array($0.unicodeScalars) }) else {
                text = String(String.UnicodeScalarView(piece))
                continue
            }
            let tail = String(String.UnicodeScalarView(sofar.suffix(2))).lowercased()
            let head = String(String.UnicodeScalarView(piece.prefix(2))).lowercased()
            if tail == head {
                text = String(String.UnicodeScalarView(sofar + piece.dropFirst(2)))
            } else {
                impossible = true
            }
        }
        let phrase = PostgresSearchQuery.Phrase(text: impossible ? nil : text, initial: initial)
        phrases.append(phrase)
        return phrase
    }
}
