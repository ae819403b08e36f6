import XCTest
@testable import ParleyMarkdown
import ParleyTestSupport

/// Issue 11: a reply made of one long block streams in linear time. Parsed bytes (the measure of
/// the CPU) and tail bytes (the measure of what a client is sent) grow linearly with the reply, and
/// the invariant holds for these shapes too.
final class LongBlockStreamingTests: XCTestCase {
    private struct Run {
        var parsedBytes = 0
        /// Bytes of the tail changes: appended text plus every replacing tail.
        var tailBytes = 0
        var appends = 0
        var replaces = 0
    }

    private func stream(_ text: String, pieceBytes: Int = 12, policy: ReparsePolicy = ReparsePolicy()) -> Run {
        var markdown = StableMarkdown(policy: policy)
        var run = Run()
        for piece in LongReplies.pieces(of: text, bytes: pieceBytes) {
            switch markdown.append(piece).tail {
            case .unchanged: break
            case .appended(let text): run.tailBytes += text.utf8.count; run.appends += 1
            case .replaced(let tail): run.tailBytes += tail.utf8.count; run.replaces += 1
            }
        }
        run.parsedBytes = markdown.parsedByteCount
        _ = markdown.finish()
        return run
    }

    private func assertLinear(_ name: String, small: String, large: String, maxParsedRatio: Double,
                              file: StaticString = #filePath, line: UInt = #line) {
        let smallRun = stream(small)
        let largeRun = stream(large)
        let lengthRatio = Double(large.utf8.count) / Double(small.utf8.count)
        print("[long] \(name): \(small.utf8.count) B parsed \(smallRun.parsedBytes) B, tail \(smallRun.tailBytes) B; "
              + "\(large.utf8.count) B parsed \(largeRun.parsedBytes) B, tail \(largeRun.tailBytes) B "
              + "(\(largeRun.appends) appends, \(largeRun.replaces) replaces)")
        XCTAssertLessThan(Double(largeRun.parsedBytes), Double(large.utf8.count) * maxParsedRatio,
                          "\(name): parsed bytes", file: file, line: line)
        XCTAssertLessThan(Double(largeRun.parsedBytes) / Double(max(smallRun.parsedBytes, 1)), lengthRatio * 1.3,
                          "\(name): parsed bytes must grow linearly", file: file, line: line)
        // The tail is sent about once: appends, plus short replaces after each commit.
        XCTAssertLessThan(largeRun.tailBytes, large.utf8.count * 2, "\(name): tail bytes", file: file, line: line)
    }

    func testALongCodeBlockIsParsedAboutOnce() {
        assertLinear("code", small: LongReplies.codeBlock(lines: 500), large: LongReplies.codeBlock(lines: 2000),
                     maxParsedRatio: 1.5)
    }

    func testALongListIsParsedAFewTimesOnly() {
        assertLinear("list", small: LongReplies.list(items: 250), large: LongReplies.list(items: 1000),
                     maxParsedRatio: 7)
    }

    func testALongTableIsParsedAFewTimesOnly() {
        assertLinear("table", small: LongReplies.table(rows: 125), large: LongReplies.table(rows: 500),
                     maxParsedRatio: 7)
    }

    func testProseStaysLinear() {
        assertLinear("prose", small: LongReplies.prose(bytes: 15_000), large: LongReplies.prose(bytes: 60_000),
                     maxParsedRatio: 7)
    }

    func testAnOpenFenceGrowsByAppendsAndIsCommittedAtItsClosingLine() {
        var markdown = StableMarkdown()
        XCTAssertEqual(markdown.append("Intro\n\n").blocks.map(\.html), ["<p>Intro</p>\n"])
        let opened = markdown.append("~~~~ python\nx = 1\n")
        XCTAssertEqual(opened.blocks, [])
        XCTAssertEqual(opened.tail, .appended("~~~~ python\nx = 1\n"))
        XCTAssertEqual(markdown.tail, "\n~~~~ python\nx = 1\n")
        let parsed = markdown.parsedByteCount
        // None of these closes a four-tilde fence: shorter, backticks, four spaces, tab, info string.
        for line in ["~~~\n", "````\n", "    ~~~~\n", "\t~~~~\n", "~~~~ x\n", "y = [2]\n"] {
            let update = markdown.append(line)
            XCTAssertEqual(update.blocks, [], line.debugDescription)
            XCTAssertEqual(update.tail, .appended(line), line.debugDescription)
        }
        XCTAssertEqual(markdown.parsedByteCount, parsed, "the open fence is scanned, not parsed")
        let closed = markdown.append("   ~~~~~  \nAfter\n")
        XCTAssertEqual(closed.blocks.map(\.html), [
            "<pre><code class=\"language-python\">x = 1\n~~~\n````\n    ~~~~\n\t~~~~\n~~~~ x\ny = [2]\n</code></pre>\n"])
        XCTAssertEqual(closed.tail, .replaced("After\n"))
        XCTAssertEqual(markdown.finish().patch, [])
    }

    func testAClosingFenceSplitAcrossPiecesStillCloses() {
        var markdown = StableMarkdown()
        _ = markdown.append("```\na\n")
        var blocks: [MarkdownBlock] = []
        for piece in ["`", "`", "`", "\r", "\nb\r\n"] { blocks += markdown.append(piece).blocks }
        XCTAssertEqual(blocks.map(\.html), ["<pre><code>a\n</code></pre>\n"])
        XCTAssertEqual(markdown.tail, "b\r\n")
    }

    func testAFenceInsideAListIsNotTakenForATopLevelOne() {
        // The list item's fence ends with the item: only a parse can tell.
        let harness = StreamingHarness()
        let text = "- item\n  ```\n  code\n" + String(repeating: "  more code\n", count: 200) + "\nAfter\n\n# End\n"
        let outcome = harness.run(LongReplies.pieces(of: text, bytes: 7), label: "fence in a list")
        XCTAssertEqual(outcome.final.patch, [])
        XCTAssertGreaterThanOrEqual(outcome.committed.count, 2, "the list and the paragraph are committed while streaming")
    }

    func testLongBlocksKeepTheInvariantForRandomPieces() {
        let harness = StreamingHarness()
        let mixed = LongReplies.list(items: 80) + LongReplies.codeBlock(lines: 120) + "> quote\n" + String(
            repeating: "> more of the quote\n", count: 80) + "\n" + LongReplies.table(rows: 60)
            + "<div>\n" + String(repeating: "html line\n", count: 100) + "</div>\n\nEnd.\n"
        for (name, text) in [("code", LongReplies.codeBlock(lines: 300)), ("list", LongReplies.list(items: 200)),
                             ("table", LongReplies.table(rows: 150)), ("mixed", mixed)] {
            for seed in UInt64(1)...3 {
                let outcome = harness.run(StreamingHarness.randomPieces(text, seed: seed, maxLength: 40),
                                          label: "\(name) seed \(seed)")
                XCTAssertEqual(outcome.final.patch, [], name)
            }
        }
    }

    private let longList = "Intro\n\n" + (0..<50).map { "- item \($0)\n" }.joined()

    func testABlockAfterALongListIsCommittedOnceTheDelayPassed() {
        var markdown = StableMarkdown(policy: ReparsePolicy(smallRegionBytes: 100, growth: 100, interval: .zero))
        _ = markdown.append(longList)
        XCTAssertEqual(markdown.blocks.count, 1, "the intro")
        _ = markdown.append("# Next\n")
        XCTAssertEqual(markdown.blocks.count, 3, "with no delay the list is committed at the next line")
        var lazy = StableMarkdown(policy: ReparsePolicy(smallRegionBytes: 100, growth: 100, interval: .seconds(3600)))
        _ = lazy.append(longList)
        _ = lazy.append("# Next\n")
        XCTAssertEqual(lazy.blocks.count, 1, "without growth, delay or a blank line the list waits")
        XCTAssertEqual(lazy.finish().blocks.count, 2)
    }

    func testALineUnlikeTheListAfterABlankLineCommitsItAtOnce() {
        var lazy = StableMarkdown(policy: ReparsePolicy(smallRegionBytes: 100, growth: 100, interval: .seconds(3600)))
        _ = lazy.append(longList)
        let parsed = lazy.parsedByteCount
        _ = lazy.append("\n- a loose item\n\n- another\n")
        XCTAssertEqual(lazy.parsedByteCount, parsed, "list items after blank lines do not trigger a parse")
        XCTAssertEqual(lazy.append("\nAfter the list.\n").blocks.count, 1, "the list")
        XCTAssertEqual(lazy.tail, "After the list.\n")
    }

    func testLinesInsideAnHTMLPreBlockDoNotTriggerAParseEachTime() {
        // A `<pre>` block goes on across blank lines: a line after a blank one triggers one parse
        // that commits nothing, then the trigger waits for the next growth.
        var lazy = StableMarkdown(policy: ReparsePolicy(smallRegionBytes: 100, growth: 100, interval: .seconds(3600)))
        _ = lazy.append("<pre>\n" + String(repeating: "x\n", count: 100))
        let parsed = lazy.parsedByteCount
        for paragraph in 0..<50 { _ = lazy.append("\nline \(paragraph)\n") }
        XCTAssertLessThanOrEqual(lazy.parsedByteCount - parsed, 1000, "one parse, not one per paragraph")
        XCTAssertEqual(lazy.blocks, [])
        _ = lazy.append("</pre>\n\nAfter\n")
        XCTAssertEqual(lazy.finish().blocks.count, 2)
    }
}

/// The in-place scan for a closing fence agrees with the line table's rule.
final class ClosingFenceScanTests: XCTestCase {
    func testTheScanAgreesWithTheLineRule() {
        let lines = ["```\n", "  ```  \n", "   ````\t\n", "    ```\n", "\t```\n", "``\n", "``` x\n", "~~~\n", "```",
                     "```\r\n", "```\r", "x```\n", "\n", "a\r\n", "``` \r"]
        for first in lines {
            for second in lines {
                let text = Array((first + second).utf8)
                let index = LineIndex(text[...])
                let byTable = index.containsClosingFence(1..<(index.count + 1), character: UInt8(ascii: "`"), length: 3)
                let byScan = LineIndex.containsClosingFence(text[...], character: UInt8(ascii: "`"), length: 3)
                XCTAssertEqual(byScan, byTable, (first + second).debugDescription)
            }
        }
    }
}
