import Foundation

/// The snippet of a search hit, made from the document's text and the query's terms: about 60
/// characters around the first match, every occurrence of a term in it between `SearchHit`'s match
/// marks, `…` where the text was cut. At most `maxBytes` bytes of UTF-8, marks and `…` included, and
/// each character capped (`BoundedText`): a character count alone let one grapheme cluster of
/// 450,000 combining marks make a 900 KB snippet.
///
/// Made here rather than by FTS5's `snippet()`: that function needs the MATCH evaluated again for its
/// one row, about 0.8 ms per hit on trigrams (16 ms for a page of 20), while finding the terms in
/// the text costs microseconds. On a trigram index a term matches as a substring without case, which
/// is what is looked for here.
enum SearchSnippet {
    /// Characters kept before the first match, and in all.
    static let before = 24
    static let length = 64
    /// The whole snippet's UTF-8 bytes, marks and ellipses included.
    static let maxBytes = 512

    static func make(terms: [String], in body: String) -> String {
        let text = String(String.UnicodeScalarView(body.unicodeScalars.filter {
            $0 != SearchHit.matchStart && $0 != SearchHit.matchEnd
        }))
        let terms = terms.filter { !$0.isEmpty }
        guard let first = terms.compactMap({ text.range(of: $0, options: .caseInsensitive) })
            .min(by: { $0.lowerBound < $1.lowerBound })
        else {
            let head = BoundedText.prefix(text, characters: length, bytes: maxBytes - ellipsis)
            return head.text + (head.cut ? "…" : "")
        }
        // Up to `before` characters before the match, but at most a quarter of the bytes, so wide
        // characters ahead of it never push the match itself out.
        var start = first.lowerBound
        var lead = 0
        for _ in 0..<before where start > text.startIndex {
            let previous = text.index(before: start)
            lead += BoundedText.size(of: text[previous])
            guard lead <= maxBytes / 4 else { break }
            start = previous
        }
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
        var out = Piece(budget: maxBytes - ellipsis)  // room kept for the closing `…`
        if start != text.startIndex { out.append("…") }
        var cursor = start
        var complete = true
        for range in merged where complete {
            complete = out.append(text[cursor..<range.lowerBound])
            guard complete else { break }
            complete = out.appendMarked(text[range])
            cursor = range.upperBound
        }
        if complete { complete = out.append(text[cursor..<end]) }
        return out.text + (complete && end == text.endIndex ? "" : "…")
    }

    /// The bytes of `…`.
    private static let ellipsis = 3

    /// The snippet as it is made, within its byte budget.
    private struct Piece {
        var text = ""
        var budget: Int

        /// Appends what fits of `part`, each character capped; false if not all of it did.
        @discardableResult
        mutating func append(_ part: Substring) -> Bool {
            let kept = BoundedText.prefix(part, characters: Int.max, bytes: budget)
            text += kept.text
            budget -= kept.text.utf8.count
            return !kept.cut
        }

        /// `part` between the match marks; a mark is opened only if a character of it fits.
        mutating func appendMarked(_ part: Substring) -> Bool {
            let marks = 2 * UTF8.width(SearchHit.matchStart)
            guard budget > marks else { return false }
            budget -= marks
            let kept = BoundedText.prefix(part, characters: Int.max, bytes: budget)
            guard !kept.text.isEmpty else { return false }
            text.unicodeScalars.append(SearchHit.matchStart)
            text += kept.text
            text.unicodeScalars.append(SearchHit.matchEnd)
            budget -= kept.text.utf8.count
            return !kept.cut
        }
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
