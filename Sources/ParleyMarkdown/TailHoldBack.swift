/// How much of a streaming reply's open tail can be rendered without guessing (issue 18, item 3). The
/// rest is held back until more text decides it, the way streaming renderers such as remend/Streamdown
/// do, so the provisional render never shows `**Markd`, a stray backtick, an empty bullet or heading, or
/// a table header as a row of pipes.
///
/// Held back, from its start:
/// - in the last, incomplete line, an inline marker that is still open: a code span's backticks with
///   no closing run, `*`, `_` or `~` that can open emphasis and has no closer, a `[` (or `![`) whose
///   link is not complete (`[text`, `[text]` at the end, `[text](url`), and a marker run at the very
///   end (it may open something);
/// - an incomplete line that is nothing but block markers so far (`-`, `#`, `1.`, `>`, `|`, `---`…),
///   or that starts a code fence (the code frame opens once the fence line is complete);
/// - a paragraph that starts with `|` and has no complete delimiter row yet (a table in the making).
///
/// Complete lines are shown as cmark renders them: a marker a finished line left open is literal
/// unless a later line closes it. Pure and allocation-light; the scan is linear in the last line and
/// the last paragraph's first two lines.
enum TailHoldBack {
    /// The number of leading bytes of `tail` to render.
    static func visibleCount(_ tail: ArraySlice<UInt8>) -> Int {
        let start = tail.startIndex
        let lineStart = (tail.lastIndex(of: newline).map { $0 + 1 }) ?? start
        var cut = tail.endIndex
        if lineStart < tail.endIndex {
            let line = tail[lineStart...]
            cut = lineStart + inlineCut(line)
            if onlyBlockMarkers(tail[lineStart..<cut]) || opensFence(line) { cut = lineStart }
        }
        if let table = unfinishedTable(tail[start..<cut]) { cut = table }
        return cut - start
    }

    private static let newline = UInt8(ascii: "\n")
    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")
    private static let backtick = UInt8(ascii: "`")
    private static let tilde = UInt8(ascii: "~")
    private static let pipe = UInt8(ascii: "|")

    // MARK: - Inline markers

    /// Offset in `line` of the first open inline marker, or the line's length when none is open.
    private static func inlineCut(_ line: ArraySlice<UInt8>) -> Int {
        let bytes = Array(line)
        let count = bytes.count
        /// Emphasis openers (character, offset) and link openers (offsets), innermost last.
        var emphasis: [(UInt8, Int)] = []
        var brackets: [Int] = []
        var index = 0
        func byte(_ at: Int) -> UInt8? { at >= 0 && at < count ? bytes[at] : nil }
        while index < count {
            let character = bytes[index]
            switch character {
            case UInt8(ascii: "\\"):
                index += 2
                continue
            case backtick:
                let run = runLength(bytes, at: index)
                guard let close = closingBackticks(bytes, from: index + run, length: run) else {
                    return min(index, firstOpen(emphasis, brackets) ?? index)
                }
                index = close + run
                continue
            case UInt8(ascii: "*"), UInt8(ascii: "_"), tilde:
                let run = runLength(bytes, at: index)
                guard let next = byte(index + run) else {
                    // A run at the very end may open something once the next character comes.
                    return min(index, firstOpen(emphasis, brackets) ?? index)
                }
                let previous = byte(index - 1) ?? space
                let left = !isWhitespace(next) && (!isPunctuation(next) || isWhitespace(previous) || isPunctuation(previous))
                let right = !isWhitespace(previous) && (!isPunctuation(previous) || isWhitespace(next) || isPunctuation(next))
                let underscore = character == UInt8(ascii: "_")
                let canOpen = underscore ? left && (!right || isPunctuation(previous)) : left
                let canClose = underscore ? right && (!left || isPunctuation(next)) : right
                if canClose, let opener = emphasis.lastIndex(where: { $0.0 == character }) {
                    // Delimiters between an opener and its closer can no longer match: drop them.
                    emphasis.removeSubrange(opener...)
                } else if canOpen {
                    emphasis.append((character, index))
                }
                index += run
                continue
            case UInt8(ascii: "["):
                brackets.append(byte(index - 1) == UInt8(ascii: "!") ? index - 1 : index)
            case UInt8(ascii: "]"):
                guard let opener = brackets.popLast() else { break }
                switch byte(index + 1) {
                case nil:
                    // `[text]` may still become `[text](url)`.
                    return min(opener, firstOpen(emphasis, brackets) ?? opener)
                case UInt8(ascii: "("):
                    guard let close = closingParenthesis(bytes, from: index + 2) else {
                        return min(opener, firstOpen(emphasis, brackets) ?? opener)
                    }
                    index = close + 1
                    continue
                default:
                    break
                }
            default:
                break
            }
            index += 1
        }
        return firstOpen(emphasis, brackets) ?? count
    }

    private static func firstOpen(_ emphasis: [(UInt8, Int)], _ brackets: [Int]) -> Int? {
        let offsets = emphasis.map(\.1) + brackets
        return offsets.min()
    }

    private static func runLength(_ bytes: [UInt8], at index: Int) -> Int {
        var end = index
        while end < bytes.count, bytes[end] == bytes[index] { end += 1 }
        return end - index
    }

    /// The offset of a run of exactly `length` backticks at or after `from`.
    private static func closingBackticks(_ bytes: [UInt8], from: Int, length: Int) -> Int? {
        var index = from
        while index < bytes.count {
            guard bytes[index] == backtick else {
                index += 1
                continue
            }
            let run = runLength(bytes, at: index)
            if run == length { return index }
            index += run
        }
        return nil
    }

    /// The offset of the `)` that ends a link destination starting at `from` (nested pairs allowed).
    private static func closingParenthesis(_ bytes: [UInt8], from: Int) -> Int? {
        var depth = 0
        var index = from
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 1
            case UInt8(ascii: "("): depth += 1
            case UInt8(ascii: ")"):
                if depth == 0 { return index }
                depth -= 1
            default: break
            }
            index += 1
        }
        return nil
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == space || byte == tab || byte == newline || byte == UInt8(ascii: "\r")
    }

    /// ASCII punctuation, as CommonMark's flanking rules count it (other scripts count as letters here).
    private static func isPunctuation(_ byte: UInt8) -> Bool {
        (0x21...0x2F).contains(byte) || (0x3A...0x40).contains(byte) || (0x5B...0x60).contains(byte)
            || (0x7B...0x7E).contains(byte)
    }

    // MARK: - Block markers

    /// Whether `line` holds only whitespace and the characters that begin a block (a bullet, a
    /// heading's `#`s, a list number, a quote's `>`, a table's `|`, a thematic break, a setext underline).
    private static func onlyBlockMarkers(_ line: ArraySlice<UInt8>) -> Bool {
        line.allSatisfy { byte in
            isWhitespace(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || Array("-*+#>|=_:.)`~".utf8).contains(byte)
        }
    }

    /// Whether `line` starts, after up to three spaces, with three backticks or tildes.
    private static func opensFence(_ line: ArraySlice<UInt8>) -> Bool {
        let trimmed = line.drop { $0 == space }
        guard line.count - trimmed.count <= 3, let first = trimmed.first, first == backtick || first == tilde else {
            return false
        }
        return trimmed.prefix(3).allSatisfy { $0 == first } && trimmed.count >= 3
    }

    /// Where a trailing paragraph that starts with `|` begins, when it has no complete delimiter row
    /// (`|---|:-:|`) as its second line yet; nil otherwise.
    private static func unfinishedTable(_ text: ArraySlice<UInt8>) -> Int? {
        // The last paragraph starts after the last blank line.
        var paragraph = text.startIndex
        var blank = true
        for index in text.indices {
            let byte = text[index]
            if byte == newline {
                if blank { paragraph = index + 1 }
                blank = true
            } else if !isWhitespace(byte) {
                blank = false
            }
        }
        guard paragraph < text.endIndex else { return nil }
        let first = text[paragraph...].prefix { $0 != newline }
        guard first.drop(while: { $0 == space }).first == pipe else { return nil }
        let secondStart = first.endIndex + 1
        guard secondStart < text.endIndex,
              let secondEnd = text[secondStart...].firstIndex(of: newline) else { return paragraph }
        return isDelimiterRow(text[secondStart..<secondEnd]) ? nil : paragraph
    }

    private static func isDelimiterRow(_ line: ArraySlice<UInt8>) -> Bool {
        var dashes = false
        for byte in line {
            switch byte {
            case UInt8(ascii: "-"): dashes = true
            case pipe, UInt8(ascii: ":"), space, tab, UInt8(ascii: "\r"): break
            default: return false
            }
        }
        return dashes
    }
}
