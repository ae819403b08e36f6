import XCTest
@testable import ParleyMarkdown

final class StableMarkdownTests: XCTestCase {
    private func appendAll(_ pieces: [String], to markdown: inout StableMarkdown) -> [MarkdownBlock] {
        pieces.flatMap { markdown.append($0).blocks }
    }

    func testPartialLineIsNeverParsed() {
        var markdown = StableMarkdown()
        // "#" alone would be an empty heading; the next character makes it a lazy continuation.
        let first = markdown.append("> quote\n#")
        XCTAssertEqual(first.blocks, [])
        XCTAssertEqual(first.tail, .appended("> quote\n#"))
        XCTAssertEqual(markdown.tail, "> quote\n#")
        _ = markdown.append("hashtag\n\nNext\n\n# End\n")
        XCTAssertEqual(markdown.blocks.first, "<blockquote>\n<p>quote\n#hashtag</p>\n</blockquote>\n")
        XCTAssertFalse(markdown.blocks.contains("<h1></h1>\n"))
    }

    func testParagraphWaitsForSetextUnderline() {
        var markdown = StableMarkdown()
        XCTAssertEqual(markdown.append("Title line\n").blocks, [])
        XCTAssertEqual(markdown.append("---\n").blocks, [MarkdownBlock(index: 0, html: "<h2>Title line</h2>\n")])
        XCTAssertEqual(markdown.finish().patch, [])
    }

    func testParagraphIsCommittedOnceABlankLineFollows() {
        var markdown = StableMarkdown()
        XCTAssertEqual(markdown.append("Some *text*\n").blocks, [])
        let update = markdown.append("\n")
        XCTAssertEqual(update.blocks, [MarkdownBlock(index: 0, html: "<p>Some <em>text</em></p>\n")])
        XCTAssertEqual(update.tail, .replaced("\n"))
    }

    func testFencedCodeIsCommittedAtItsClosingFence() {
        var markdown = StableMarkdown()
        XCTAssertEqual(markdown.append("```js\nlet a = b[0]\n").blocks, [])
        XCTAssertEqual(markdown.append("``\n").blocks, [], "a shorter fence does not close")
        let update = markdown.append("```\n")
        XCTAssertEqual(update.blocks.map(\.html),
                       ["<pre><code class=\"language-js\">let a = b[0]\n``\n</code></pre>\n"])
        XCTAssertEqual(update.tail, .replaced(""))
    }

    func testUnclosedFenceStaysInTheTail() {
        var markdown = StableMarkdown()
        let update = markdown.append("Intro\n\n```\ncode\n")
        XCTAssertEqual(update.blocks.map(\.html), ["<p>Intro</p>\n"])
        XCTAssertEqual(update.tail, .replaced("```\ncode\n"))
        let final = markdown.finish()
        XCTAssertEqual(final.blocks, [MarkdownBlock(index: 1, html: "<pre><code>code\n</code></pre>\n")])
        XCTAssertEqual(final.blockCount, 2)
    }

    func testListStaysOpenAcrossBlankLines() {
        var markdown = StableMarkdown()
        XCTAssertEqual(markdown.append("- a\n- b\n\n").blocks, [])
        XCTAssertEqual(markdown.append("  still b\n\n").blocks, [])
        XCTAssertEqual(markdown.append("After\n").blocks.map(\.html),
                       ["<ul>\n<li>\n<p>a</p>\n</li>\n<li>\n<p>b</p>\n<p>still b</p>\n</li>\n</ul>\n"])
    }

    func testLastBlockWithBracketWaitsForAPossibleDefinition() {
        var markdown = StableMarkdown()
        XCTAssertEqual(markdown.append("See [x].\n\n").blocks, [])
        _ = markdown.append("[x]: https://example.com/\n\nNext\n")
        XCTAssertEqual(markdown.blocks, ["<p>See <a href=\"https://example.com/\">x</a>.</p>\n"])
        XCTAssertEqual(markdown.finish().patch, [])
    }

    func testCommittedDefinitionResolvesLaterReferences() {
        var markdown = StableMarkdown()
        _ = markdown.append("[x]: https://example.com/\n\nIntro\n\n# Part\n")
        XCTAssertEqual(markdown.blocks.count, 2)
        XCTAssertEqual(markdown.tail, "")
        _ = markdown.append("Use [x] here.\n\n# End\n")
        XCTAssertEqual(markdown.blocks[2], "<p>Use <a href=\"https://example.com/\">x</a> here.</p>\n")
        XCTAssertEqual(markdown.finish().patch, [])
    }

    func testLateDefinitionIsPatchedAtFinish() {
        var markdown = StableMarkdown()
        _ = markdown.append("See [x].\n\nMiddle\n\nEnd\n\n")
        _ = markdown.append("[x]: https://example.com/\n")
        XCTAssertEqual(markdown.blocks, ["<p>See [x].</p>\n", "<p>Middle</p>\n", "<p>End</p>\n"])
        let final = markdown.finish()
        XCTAssertEqual(final.patch, [MarkdownBlock(index: 0, html: "<p>See <a href=\"https://example.com/\">x</a>.</p>\n")])
        XCTAssertEqual(final.blocks, [])
        XCTAssertEqual(final.blockCount, 3)
    }

    func testFootnotesSectionComesInTheFinalBlocks() {
        var markdown = StableMarkdown()
        _ = markdown.append("Claim[^1].\n\n[^1]: Source.\n")
        let final = markdown.finish()
        XCTAssertTrue(final.blocks.last?.html.hasPrefix("<section class=\"footnotes\" data-footnotes>") ?? false)
    }

    func testTailGrowsByAppendsUntilACommitReplacesIt() {
        var markdown = StableMarkdown()
        XCTAssertEqual(markdown.append("Hel").tail, .appended("Hel"))
        XCTAssertEqual(markdown.append("lo\n").tail, .appended("lo\n"))
        XCTAssertEqual(markdown.tail, "Hello\n")
        XCTAssertEqual(markdown.append("").tail, .unchanged)
        XCTAssertEqual(markdown.append("\nWor").tail, .replaced("\nWor"))
        XCTAssertEqual(markdown.blocks, ["<p>Hello</p>\n"])
        XCTAssertEqual(markdown.text, "Hello\n\nWor")
    }

    func testHalfACarriageReturnLineEndingIsNotALineEnd() {
        var markdown = StableMarkdown()
        XCTAssertEqual(markdown.append("# A\r").blocks, [])
        XCTAssertEqual(markdown.append("\nB\r\n").blocks.map(\.html), ["<h1>A</h1>\n"])
    }

    func testFinishIsIdempotentAndLaterAppendsAreIgnored() {
        var markdown = StableMarkdown()
        _ = markdown.append("One\n\nTwo")
        let first = markdown.finish()
        XCTAssertEqual(markdown.append("\n\nThree\n\n"), MarkdownUpdate(blocks: [], tail: .unchanged))
        XCTAssertEqual(markdown.finish(), first)
        XCTAssertTrue(markdown.isFinished)
        XCTAssertEqual(markdown.blocks, ["<p>One</p>\n", "<p>Two</p>\n"])
    }

    func testEmptyReplyFinishesWithNoBlocks() {
        var markdown = StableMarkdown()
        XCTAssertEqual(markdown.finish(), MarkdownFinal(patch: [], blocks: [], blockCount: 0))
    }

    func testPreludeHoldsOnlyPiecesWithDefinitions() {
        var markdown = StableMarkdown()
        _ = markdown.append(String(repeating: "Plain paragraph.\n\n", count: 50) + "[x]: /u\n\n# A\n\nB [x]\n\n# C\n")
        XCTAssertEqual(markdown.blocks.count, 53)
        XCTAssertEqual(markdown.blocks[51], "<p>B <a href=\"/u\">x</a></p>\n")
        XCTAssertLessThan(markdown.preludeByteCount, 100, "plain paragraphs must not be re-parsed")
    }
}
