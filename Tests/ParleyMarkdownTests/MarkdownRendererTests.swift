import XCTest
import Synchronization
import Foundation
@testable import ParleyMarkdown

final class MarkdownRendererTests: XCTestCase {
    let renderer = MarkdownRenderer()

    /// An `on…=` attribute inside a tag. Built once and checked by a test of its own: a pattern that
    /// failed to compile must fail, never silently disable the check.
    private static let eventHandler = try! NSRegularExpression(pattern: #"<[a-z][^>]*\son[a-z]+\s*="#)

    func testTheEventHandlerCheckFindsHandlers() {
        for html in ["<img src=x onerror=alert(1)>", "<div class=\"a\" onmouseover = \"x\">", "<a\nonclick=y>"] {
            XCTAssertNotNil(Self.eventHandler.firstMatch(in: html, range: NSRange(html.startIndex..., in: html)), html)
        }
        let inert = "<p>one=1 and on=2, <code>onload=</code></p>"
        XCTAssertNil(Self.eventHandler.firstMatch(in: inert, range: NSRange(inert.startIndex..., in: inert)))
    }

    /// Fails on anything that could run script or style in a browser.
    private func assertInert(_ html: String, file: StaticString = #filePath, line: UInt = #line) {
        let lower = html.lowercased()
        for needle in ["<script", "<iframe", "<object", "<embed", "<svg", "<style", "style=",
                       "href=\"javascript:", "src=\"javascript:", "href=\"vbscript:", "href=\"file:",
                       "href=\"data:text", "src=\"data:text"] {
            XCTAssertFalse(lower.contains(needle), "found \(needle) in \(html)", file: file, line: line)
        }
        // No event-handler attribute inside any tag (quoted attribute values, escaped by cmark, are
        // blanked first so their text does not count).
        let unquoted = lower.replacingOccurrences(of: #""[^"]*""#, with: "\"\"", options: .regularExpression)
        let range = NSRange(unquoted.startIndex..., in: unquoted)
        XCTAssertNil(Self.eventHandler.firstMatch(in: unquoted, range: range), "event handler in \(html)",
                     file: file, line: line)
    }

    // MARK: - Untrusted input

    func testScriptBlockBecomesPlaceholder() {
        let html = renderer.render("<script>alert(1)</script>\n")
        XCTAssertEqual(html, "<!-- raw HTML omitted -->\n")
    }

    func testInlineImageWithOnerrorIsOmitted() {
        let html = renderer.render("hi <img src=x onerror=alert(1)> there\n")
        XCTAssertEqual(html, "<p>hi <!-- raw HTML omitted --> there</p>\n")
    }

    func testHTMLBlockWithHandlersIsOmitted() {
        let html = renderer.render("<div onmouseover=\"alert(1)\">\n*x*\n</div>\n\n<iframe src=\"https://evil\"></iframe>\n")
        XCTAssertFalse(html.contains("<div"))
        assertInert(html)
    }

    func testJavascriptInlineLinkIsEmptied() {
        XCTAssertEqual(renderer.render("[a](javascript:alert(1))\n"), "<p><a href=\"\">a</a></p>\n")
        XCTAssertEqual(renderer.render("[a](JaVaScRiPt:alert(1))\n"), "<p><a href=\"\">a</a></p>\n")
    }

    func testJavascriptReferenceLinkIsEmptied() {
        XCTAssertEqual(renderer.render("[a][r]\n\n[r]: javascript:alert(1)\n"), "<p><a href=\"\">a</a></p>\n")
    }

    func testJavascriptAutolinkIsEmptied() {
        XCTAssertEqual(renderer.render("<javascript:alert(1)>\n"),
                       "<p><a href=\"\">javascript:alert(1)</a></p>\n")
    }

    func testVbscriptAndFileLinksAreEmptied() {
        XCTAssertEqual(renderer.render("[v](vbscript:msgbox) [f](file:///etc/passwd)\n"),
                       "<p><a href=\"\">v</a> <a href=\"\">f</a></p>\n")
    }

    func testDataURLsAreEmptiedExceptImages() {
        XCTAssertEqual(renderer.render("[d](data:text/html;base64,PHNjcmlwdD4=)\n"), "<p><a href=\"\">d</a></p>\n")
        XCTAssertEqual(renderer.render("![i](data:image/png;base64,AAAA)\n"),
                       "<p><img src=\"data:image/png;base64,AAAA\" alt=\"i\" /></p>\n")
        XCTAssertEqual(renderer.render("![i](data:text/html,x)\n"), "<p><img src=\"\" alt=\"i\" /></p>\n")
    }

    func testJavascriptImageSourceIsEmptied() {
        XCTAssertEqual(renderer.render("![x](javascript:alert(1))\n"), "<p><img src=\"\" alt=\"x\" /></p>\n")
    }

    func testLinkTitleCannotBreakOutOfItsAttribute() {
        let html = renderer.render("[a](/u \"x\\\" onmouseover=alert(1) \\\"\")\n")
        XCTAssertTrue(html.contains("title=\"x&quot; onmouseover=alert(1) &quot;\""), html)
        assertInert(html)
    }

    func testPayloadCollectionRendersInert() {
        let payloads = [
            "<script>alert(1)</script>", "<SCRIPT SRC=//evil/x.js></SCRIPT>", "<img src=x onerror=alert(1)>",
            "<svg onload=alert(1)>", "<a href=\"javascript:alert(1)\">x</a>", "[x](javascript:alert(1))",
            "[x]( javascript:alert(1) )", "[x](<javascript:alert(1)>)", "<javascript:alert(1)>",
            "[x](data:text/html,<script>alert(1)</script>)", "![x](\"onerror=\"alert(1))",
            "<style>body{display:none}</style>", "<p style=\"color:red\">x</p>", "<iframe src=//evil>",
            "```\n<script>alert(1)</script>\n```", "`<script>`", "<!-- x --><script>alert(1)</script>",
            "[x][ref]\n\n[ref]: javascript:alert(1) \"t\"", "www.example.com/<script>alert(1)</script>",
            "| a |\n|---|\n| <img src=x onerror=alert(1)> |", "- [ ] <script>alert(1)</script>",
            "x[^1]\n\n[^1]: <script>alert(1)</script>", "<details open ontoggle=alert(1)>",
        ]
        for payload in payloads {
            assertInert(renderer.render(payload + "\n"))
        }
    }

    func testNULCharacterBecomesReplacementCharacter() {
        XCTAssertEqual(renderer.render("a\u{0}b\n"), "<p>a\u{FFFD}b</p>\n")
    }

    func testCodeEscapesMarkup() {
        XCTAssertEqual(renderer.render("`<b>`\n"), "<p><code>&lt;b&gt;</code></p>\n")
    }

    // MARK: - Output shape

    func testTableAlignmentUsesAlignAttributesNeverStyle() {
        let html = renderer.render("| a | b | c |\n|:-|:-:|-:|\n| 1 | 2 | 3 |\n")
        XCTAssertTrue(html.contains("<th align=\"left\">a</th>"), html)
        XCTAssertTrue(html.contains("<td align=\"center\">2</td>"), html)
        XCTAssertTrue(html.contains("<td align=\"right\">3</td>"), html)
        XCTAssertFalse(html.contains("style="))
    }

    func testCodeFenceKeepsLanguageClass() {
        XCTAssertEqual(renderer.render("```swift\nlet x = 1\n```\n"),
                       "<pre><code class=\"language-swift\">let x = 1\n</code></pre>\n")
    }

    func testGFMExtensionsAreOn() {
        let html = renderer.render("~~gone~~ www.example.com\n\n- [x] done\n- [ ] open\n")
        XCTAssertTrue(html.contains("<del>gone</del>"), html)
        XCTAssertTrue(html.contains("<a href=\"http://www.example.com\">www.example.com</a>"), html)
        XCTAssertTrue(html.contains("<input type=\"checkbox\" checked=\"\" disabled=\"\" /> done"), html)
    }

    func testFootnotesAreOnByDefault() {
        let html = renderer.render("Claim[^1].\n\n[^1]: Source.\n")
        XCTAssertTrue(html.contains("<sup class=\"footnote-ref\"><a href=\"#fn-1\" id=\"fnref-1\" data-footnote-ref>1</a></sup>"), html)
        XCTAssertTrue(html.contains("<section class=\"footnotes\" data-footnotes>"), html)
    }

    func testFootnotesCanBeTurnedOff() {
        let html = MarkdownRenderer(footnotes: false).render("Claim[^1].\n\n[^1]: Source.\n")
        XCTAssertFalse(html.contains("footnote"), html)
    }

    func testRenderBlocksSplitsTopLevelBlocksWithFootnotesLast() {
        let blocks = renderer.renderBlocks("# H\n\nText[^a].\n\n[^a]: Note.\n\n- x\n")
        XCTAssertEqual(blocks.count, 4)
        XCTAssertEqual(blocks[0], "<h1>H</h1>\n")
        XCTAssertEqual(blocks[2], "<ul>\n<li>x</li>\n</ul>\n")
        XCTAssertTrue(blocks[3].hasPrefix("<section class=\"footnotes\""))
        XCTAssertTrue(blocks[3].hasSuffix("</section>\n"))
    }

    func testRenderBlocksJoinedEqualsRender() {
        for document in SampleDocuments.all {
            XCTAssertEqual(renderer.renderBlocks(document.text).joined(), renderer.render(document.text), document.name)
        }
    }

    func testEmptyInputRendersNothing() {
        XCTAssertEqual(renderer.render(""), "")
        XCTAssertEqual(renderer.renderBlocks(""), [])
    }

    func testRendererIsSafeToShareAcrossThreads() {
        // Without the parse lock, cmark-gfm's shared special-character table drops strikethrough and
        // autolinks in about half of the runs of this test.
        let renderer = self.renderer
        let texts = SampleDocuments.all.map(\.text)
        let expected = texts.map { renderer.render($0) }
        let mismatches = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 800) { iteration in
            let index = iteration % texts.count
            if renderer.render(texts[index]) != expected[index] { mismatches.withLock { $0 += 1 } }
        }
        XCTAssertEqual(mismatches.withLock { $0 }, 0)
    }
}
