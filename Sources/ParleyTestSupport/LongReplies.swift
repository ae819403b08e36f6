/// Replies whose one block is long, the shapes that made streaming quadratic before issue 11: a long
/// code fence, a long list, a long table, and plain prose of the same size for comparison. Shared by
/// the Markdown tests, the server's byte-count tests and `parley-markdown-bench`, so all three
/// measure the same texts. Deterministic.
public enum LongReplies {
    /// A sentence before, a fenced Swift block of `lines` lines (about 32 bytes each, as in issue 11's measure), a sentence after.
    public static func codeBlock(lines: Int) -> String {
        var text = "Here is the whole file:\n\n```swift\n"
        for line in 0..<lines {
            switch line % 4 {
            case 0: text += "func step\(line)(input: Int) -> Int {\n"
            case 1: text += "    let name = \"value <\(line)>\"\n"
            case 2: text += "    return name.count * input + \(line)\n"
            default: text += "}  // step \(line - 3)\n"
            }
        }
        return text + "```\n\nThat is all.\n"
    }

    /// A bulleted list of `items` items, with inline Markdown in each.
    public static func list(items: Int) -> String {
        var text = "The steps:\n\n"
        for item in 0..<items {
            text += "- Step \(item): check the `config` and **restart**\n"
        }
        return text + "\nDone.\n"
    }

    /// A table of `rows` rows under a header row.
    public static func table(rows: Int) -> String {
        var text = "The results:\n\n| # | name | status | time |\n|---|:---|:-:|--:|\n"
        for row in 0..<rows {
            text += "| \(row) | item \(row) | **ok** | 3.\(row % 10) s |\n"
        }
        return text + "\nAll passed.\n"
    }

    /// Paragraphs of plain prose, at least `bytes` long.
    public static func prose(bytes: Int) -> String {
        var text = ""
        var paragraph = 0
        while text.utf8.count < bytes {
            paragraph += 1
            text += "Paragraph \(paragraph) explains one more *detail* of the design, with `code` and a "
                + "[link](https://example.com/\(paragraph)).\nIt goes on for a second line — 日本語 ✓ — "
                + "and ends here.\n\n"
        }
        return text
    }

    /// `text` in pieces of `size` UTF-8 bytes, each cut moved forward to a character boundary.
    public static func pieces(of text: String, bytes size: Int) -> [String] {
        let bytes = Array(text.utf8)
        var pieces: [String] = []
        var start = 0
        while start < bytes.count {
            var end = min(bytes.count, start + size)
            while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
            pieces.append(String(decoding: bytes[start..<end], as: UTF8.self))
            start = end
        }
        return pieces
    }
}
