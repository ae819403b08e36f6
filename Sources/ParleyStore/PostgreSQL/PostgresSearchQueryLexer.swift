/// The tokens of an FTS5 query (`PostgresSearchQuery`): barewords, quoted strings and punctuation;
/// whitespace between them dropped.
enum PostgresSearchQueryLexer {
    enum Token: Sendable, Equatable {
        case word(String)
        case quoted(String)
        case open, close, openBrace, closeBrace, colon, comma, plus, star, caret, minus
        /// A character FTS5 has no use for, or a quote left open.
        case invalid(String)
        case end

        /// The token as written, for an error message.
        var text: String {
            switch self {
            case .word(let text), .quoted(let text), .invalid(let text): text
            case .open: "("
            case .close: ")"
            case .openBrace: "{"
            case .closeBrace: "}"
            case .colon: ":"
            case .comma: ","
            case .plus: "+"
            case .star: "*"
            case .caret: "^"
            case .minus: "-"
            case .end: ""
            }
        }

        /// A string a phrase is made of.
        var isString: Bool {
            switch self {
            case .word, .quoted: true
            default: false
            }
        }
    }

    static let punctuation: [Unicode.Scalar: Token] = [
        "(": .open, ")": .close, "{": .openBrace, "}": .closeBrace, ":": .colon, ",": .comma,
        "+": .plus, "*": .star, "^": .caret, "-": .minus,
    ]

    static func tokens(of query: String) -> [Token] {
        var tokens: [Token] = []
        var scalars = Array(query.unicodeScalars)[...]
        while let scalar = scalars.first {
            if scalar == "\"" {
                scalars = scalars.dropFirst()
                var text = String.UnicodeScalarView()
                var closed = false
                while let next = scalars.first {
                    scalars = scalars.dropFirst()
                    if next == "\"" {
                        guard scalars.first == "\"" else { closed = true; break }  // "" is a quote inside
                        scalars = scalars.dropFirst()
                    }
                    text.append(next)
                }
                tokens.append(closed ? .quoted(String(text)) : .invalid("unterminated string"))
            } else if isBareword(scalar) {
                var word = String.UnicodeScalarView()
                while let next = scalars.first, isBareword(next) {
                    word.append(next)
                    scalars = scalars.dropFirst()
                }
                tokens.append(.word(String(word)))
            } else {
                scalars = scalars.dropFirst()
                if scalar.properties.isWhitespace { continue }
                tokens.append(punctuation[scalar] ?? .invalid(String(scalar)))
            }
        }
        return tokens
    }

    /// FTS5's bareword characters: letters and digits of ASCII, `_`, U+001A and everything past ASCII.
    static func isBareword(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x80 || scalar.value == 0x1A || scalar == "_"
            || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }
}
