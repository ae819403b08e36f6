import Foundation

/// The snippet of a search hit, made from the document's text and the query's terms: about 60
/// characters around the first match, every occurrence of a term in it between `SearchHit`'s match
/// marks, `…` where the text was cut.
///
/// Made here rather than by FTS5's `snippet()`: that function needs the MATCH evaluated again for its
/// one row, about 0.8 ms per hit on trigrams (16 ms for a page of 20), while finding the terms in
/// the text costs microseconds. On a trigram index a term matches as a substring without case, which
/// is what is looked for here.
enum SearchSnippet {
    /// Characters kept before the first match, and in all.
    static let before = 24
    static let length = 64

    static func make(terms: [String], in body: String) -> String {
        let text = String(String.UnicodeScalarView(body.unicodeScalars.filter {
            $0 != SearchHit.matchStart && $0 != SearchHit.matchEnd
        }))
        let terms = terms.filter { !$0.isEmpty }
        guard let first = terms.compactMap({ text.range(of: $0, options: .caseInsensitive) })
            .min(by: { $0.lowerBound < $1.lowerBound })
        else {
            return String(text.prefix(length)) + (text.count > length ? "…" : "")
        }
        let start = text.index(first.lowerBound, offsetBy: -before, limitedBy: text.startIndex) ?? text.startIndex
        let end = text.index(start, offsetBy: length, limitedBy: text.endIndex) ?? text.endIndex
        // Every occurrence of every term in the window, overlapping ones merged.
        var ranges: [Range<String.Index>] = []
        for term in terms {
            var from = start
            while from < end, let found = text.range(of: term, options: .caseInsensitive, range: from..<end) {
                ranges.append(found)
                from = found.upperBound
            }
        }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<String.Index>] = []
        for range in ranges {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        var out = start == text.startIndex ? "" : "…"
        var cursor = start
        for range in merged {
            out += text[cursor..<range.lowerBound]
            out.unicodeScalars.append(SearchHit.matchStart)
            out += text[range]
            out.unicodeScalars.append(SearchHit.matchEnd)
            cursor = range.upperBound
        }
        out += text[cursor..<end]
        return out + (end == text.endIndex ? "" : "…")
    }

    /// The words and phrases an FTS5 query looks for, to mark in a snippet: quoted phrases whole,
    /// barewords without a trailing `*` or leading `^`; not the operators (`AND`, `OR`, `NOT`,
    /// `NEAR`), not a `column:` name, not what follows `NOT`, and not a NEAR distance.
    static func terms(of query: String) -> [String] {
        var terms: [String] = []
        var scalars = Array(query.unicodeScalars)[...]
        var skipNext = false
        var afterComma = false
        func add(_ term: String) {
            if skipNext {
                skipNext = false
            } else if !term.isEmpty {
                terms.append(term)
            }
        }
        while let scalar = scalars.first {
            if scalar == "\"" {
                scalars = scalars.dropFirst()
                var phrase = String.UnicodeScalarView()
                while let next = scalars.first {
                    scalars = scalars.dropFirst()
                    if next == "\"" {
                        guard scalars.first == "\"" else { break }  // "" is a quote inside a phrase
                        scalars = scalars.dropFirst()
                    }
                    phrase.append(next)
                }
                add(String(phrase))
                afterComma = false
            } else if Self.isBareword(scalar) {
                var word = String.UnicodeScalarView()
                while let next = scalars.first, Self.isBareword(next) {
                    word.append(next)
                    scalars = scalars.dropFirst()
                }
                let text = String(word)
                defer { afterComma = false }
                if scalars.first == ":" { continue }  // a column filter's name
                switch text {
                case "AND", "OR": break
                case "NOT": skipNext = true
                case "NEAR" where scalars.first == "(": break
                case _ where afterComma && Int(text) != nil: break  // NEAR(a b, 10): the distance
                default: add(text)
                }
            } else {
                afterComma = scalar == "," || (afterComma && scalar.properties.isWhitespace)
                scalars = scalars.dropFirst()
            }
        }
        return terms
    }

    /// FTS5's bareword characters: letters and digits of ASCII, `_`, U+001A and everything past ASCII.
    private static func isBareword(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x80 || scalar.value == 0x1A || scalar == "_"
            || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }
}
