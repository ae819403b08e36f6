import XCTest
@testable import ParleyMarkdown
import ParleyTestSupport

/// Issue 18, item 3: the open tail rendered provisionally. What is held back (unclosed inline
/// markers, bare block markers, a fence line in progress, a table header without its delimiter row),
/// that an open fence and a tail past the limit get none, and that the cost stays linear.
final class ProvisionalTailTests: XCTestCase {
    private func visible(_ tail: String) -> String {
        let bytes = Array(tail.utf8)
        return String(decoding: bytes.prefix(TailHoldBack.visibleCount(bytes[...])), as: UTF8.self)
    }

    func testUnclosedInlineMarkersAtTheEndAreHeldBack() {
        XCTAssertEqual(visible("Hello **Markd"), "Hello ")
        XCTAssertEqual(visible("Hello **Markdown** and `co"), "Hello **Markdown** and ")
        XCTAssertEqual(visible("see [the docs"), "see ")
        XCTAssertEqual(visible("see [the docs]"), "see ")
        XCTAssertEqual(visible("see [the docs](https://exa"), "see ")
        XCTAssertEqual(visible("see [the docs](https://example.com) now"), "see [the docs](https://example.com) now")
        XCTAssertEqual(visible("an _emph"), "an ")
        XCTAssertEqual(visible("ends with *"), "ends with ")
        XCTAssertEqual(visible("so 2*3"), "so 2")
        XCTAssertEqual(visible("2*3*4 done"), "2*3*4 done")
        XCTAssertEqual(visible("snake_case_name stays"), "snake_case_name stays", "intraword _ opens nothing")
        XCTAssertEqual(visible("array[0] = 1"), "array[0] = 1")
        XCTAssertEqual(visible("\\*not emphasis"), "\\*not emphasis")
        XCTAssertEqual(visible("`a` and ``b` c``"), "`a` and ``b` c``")
        XCTAssertEqual(visible("first line **open\nsecond"), "first line **open\nsecond",
                       "a finished line is shown as cmark renders it")
    }

    func testBareBlockMarkersAndFenceLinesInProgressAreHeldBack() {
        XCTAssertEqual(visible("- one\n- "), "- one\n")
        XCTAssertEqual(visible("## "), "")
        XCTAssertEqual(visible("## Ti"), "## Ti")
        XCTAssertEqual(visible("1."), "")
        XCTAssertEqual(visible("Para\n---"), "Para\n")
        XCTAssertEqual(visible("- **bo"), "", "nothing but the bullet is left")
        XCTAssertEqual(visible("Intro\n\n```py"), "Intro\n\n")
        XCTAssertEqual(visible("| a | b |\n"), "")
        XCTAssertEqual(visible("| a | b |\n|---|"), "")
        XCTAssertEqual(visible("| a | b |\n|---|---|\n| 1"), "| a | b |\n|---|---|\n")
        XCTAssertEqual(visible("| a | b |\n|---|---|\n| one"), "| a | b |\n|---|---|\n| one")
    }

    func testTheProvisionalHTMLIsTheTailsOwnAndResolvesEarlierDefinitions() {
        var markdown = StableMarkdown()
        var tail = ProvisionalTail()
        _ = markdown.append("[x]: https://example.com\n\nIntro.\n\n")
        _ = tail.update(markdown, tailMoved: true)
        _ = markdown.append("See [x] and **bo")
        XCTAssertEqual(tail.update(markdown, tailMoved: false),
                       .html(suffix: "<p>See <a href=\"https://example.com\">x</a> and</p>\n", keep: 0))
        XCTAssertEqual(tail.html, "<p>See <a href=\"https://example.com\">x</a> and</p>\n")
        XCTAssertEqual(markdown.blocks.joined(), "<p>Intro.</p>\n", "the committed blocks are untouched")
        XCTAssertEqual(tail.update(markdown, tailMoved: false), .unchanged, "same visible text: nothing to send")
        _ = markdown.append("ld**.")
        XCTAssertEqual(tail.update(markdown, tailMoved: false),
                       .html(suffix: " <strong>bold</strong>.</p>\n", keep: "<p>See <a href=\"https://example.com\">x</a> and".utf16.count),
                       "only the changed end is sent")
        XCTAssertEqual(tail.html, "<p>See <a href=\"https://example.com\">x</a> and <strong>bold</strong>.</p>\n")
    }

    func testAnOpenFenceAndALongTailHaveNone() {
        var markdown = StableMarkdown()
        var tail = ProvisionalTail(maxBytes: 2000)
        _ = markdown.append("Some code:\n\n```swift\nlet x = 1\n")
        _ = tail.update(markdown, tailMoved: true)
        XCTAssertTrue(markdown.isInOpenFence)
        XCTAssertNil(tail.html, "an open fence streams linearly, as code")
        _ = markdown.append("```\n\n")
        XCTAssertEqual(tail.update(markdown, tailMoved: true), .html(suffix: "", keep: 0))
        _ = markdown.append(String(repeating: "- an item that goes on\n", count: 100))
        XCTAssertEqual(tail.update(markdown, tailMoved: false), .html(suffix: nil, keep: 0), "past maxBytes")
    }

    func testTheCommonPrefixEndsOnACharacterAndCountsUTF16() {
        let kept = ProvisionalTail.commonPrefix(Array("<p>日本👍🏽a".utf8), Array("<p>日本👍🏽b".utf8))
        XCTAssertEqual(kept.bytes, "<p>日本👍🏽".utf8.count)
        XCTAssertEqual(kept.utf16, "<p>日本👍🏽".utf16.count)
        let split = ProvisionalTail.commonPrefix(Array("é".utf8), Array("è".utf8))
        XCTAssertEqual(split.bytes, 0, "never inside a character")
    }

    /// The provisional renders of a long list cost a few times the list, not its square.
    func testProvisionalRendersOfALongBlockStayLinear() {
        func cost(_ text: String) -> Int {
            var markdown = StableMarkdown()
            var tail = ProvisionalTail()
            for piece in LongReplies.pieces(of: text, bytes: 12) {
                let update = markdown.append(piece)
                _ = tail.update(markdown, tailMoved: !update.blocks.isEmpty)
            }
            return tail.renderedByteCount
        }
        let small = LongReplies.list(items: 100)
        let large = LongReplies.list(items: 300)
        let smallCost = cost(small)
        let largeCost = cost(large)
        print("[provisional] list: \(small.utf8.count) B rendered \(smallCost) B; \(large.utf8.count) B rendered \(largeCost) B")
        XCTAssertLessThan(Double(largeCost) / Double(smallCost), Double(large.utf8.count) / Double(small.utf8.count) * 1.5)
        let prose = LongReplies.prose(bytes: 20_000)
        let proseCost = cost(prose)
        print("[provisional] prose: \(prose.utf8.count) B rendered \(proseCost) B")
        XCTAssertLessThan(proseCost, prose.utf8.count * 4, "within the budget (3× what streamed) and the commits")
    }

    /// Past the budget an update is owed, not rendered; `renderOwed` renders it (the reply's timer calls it).
    func testPastTheBudgetAnUpdateIsOwedAndRenderedLater() {
        var markdown = StableMarkdown()
        var tail = ProvisionalTail(budget: 1, startingBudget: 0, maxLag: .seconds(60))
        _ = markdown.append("A paragraph that goes on")
        XCTAssertEqual(tail.update(markdown, tailMoved: true), .html(suffix: "<p>A paragraph that goes on</p>\n", keep: 0))
        _ = markdown.append(" and on")
        XCTAssertEqual(tail.update(markdown, tailMoved: false), .unchanged, "a render of the tail would pass 1× what streamed")
        XCTAssertTrue(tail.isOwed)
        XCTAssertEqual(tail.owedLag, .seconds(60))
        XCTAssertEqual(tail.renderOwed(markdown), .html(suffix: " and on</p>\n", keep: "<p>A paragraph that goes on".utf16.count))
        XCTAssertFalse(tail.isOwed)
        XCTAssertEqual(tail.renderOwed(markdown), .unchanged, "nothing owed any more")
    }
}
