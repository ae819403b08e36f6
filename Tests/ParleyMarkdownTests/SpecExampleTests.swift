import XCTest
@testable import ParleyMarkdown
import ParleyTestSupport

/// Representative CommonMark/GFM spec examples (written out by hand; the spec file is not vendored),
/// chosen for the block-structure corners a streaming split can trip on.
final class SpecExampleTests: XCTestCase {
    static let examples: [String] = [
        // Thematic breaks and setext headings
        "***\n---\n___\n", "Foo\n***\nbar\n", "Foo\n---\nbar\n", "- foo\n***\n- bar\n",
        "Foo *bar\nbaz*\n====\n", "  Foo *bar\nbaz*\t\n====\n", "Foo\n= =\n\nFoo\n--- -\n",
        "> Foo\n---\n", "> foo\nbar\n===\n", "- Foo\n---\n", "Foo\nBar\n---\n", "---\nFoo\n---\nBar\n---\nBaz\n",
        "\n====\n", "Foo\n\nbar\n---\nbaz\n", "Foo\n    ---\n",
        // ATX headings
        "# foo\n## foo\n###### foo\n####### foo\n", "#5 bolt\n\n#hashtag\n", "Foo bar\n# baz\nBar foo\n",
        "## \n#\n### ###\n", "\\## foo\n",
        // Indented code
        "    a simple\n      indented code block\n", "  - foo\n\n    bar\n", "    chunk1\n\n    chunk2\n  \n \n \n    chunk3\n",
        "Foo\n    bar\n", "    foo\nbar\n", "# Heading\n    foo\nHeading\n------\n    foo\n----\n",
        // Fenced code
        "```\n<\n >\n```\n", "``\nfoo\n``\n", "````\naaa\n```\n``````\n", "```\n", "`````\n\n```\naaa\n",
        "> ```\n> aaa\n\nbbb\n", " ```\n aaa\naaa\n```\n", "```\naaa\n  ```\n", "```\naaa\n    ```\n",
        "foo\n```\nbar\n```\nbaz\n", "```ruby\ndef foo(x)\n  return 3\nend\n```\n", "``` aa ```\nfoo\n",
        "~~~ aa ``` ~~~\nfoo\n~~~\n", "- ```\n  code\n- item\n",
        // HTML blocks
        "<table><tr><td>\n<pre>\n**Hello**,\n\n_world_.\n</pre>\n</td></tr></table>\n",
        "<div>\n*hello*\n         <foo><a>\n", "<DIV CLASS=\"foo\">\n\n*Markdown*\n\n</DIV>\n",
        "<a href=\"foo\">\n*bar*\n</a>\n", "<del>*foo*</del>\n", "<script type=\"text/javascript\">\n// JS\n\nvar x;\n</script>\nokay\n",
        "<!-- Foo\n\nbar\n   baz -->\nokay\n", "<?php\n\n  echo '>';\n\n?>\nokay\n", "Foo\n<div>\nbar\n</div>\n",
        "<div>\nbar\n</div>\n*foo*\n", "<style\n  type=\"text/css\">\n\nfoo\n",
        // Link reference definitions
        "[foo]: /url \"title\"\n\n[foo]\n", "   [foo]: \n      /url  \n           'the title'  \n\n[foo]\n",
        "[foo]: /url '\ntitle\nline1\nline2\n'\n\n[foo]\n", "[foo]:\n/url\n\n[foo]\n", "[foo]\n\n[foo]: url\n",
        "[foo]\n\n[foo]: first\n[foo]: second\n", "# [Foo]\n[foo]: /url\n> bar\n", "[foo]: /url\nbar\n===\n[foo]\n",
        "[foo]: /foo-url \"foo\"\n[bar]: /bar-url\n  \"bar\"\n[baz]: /baz-url\n\n[foo],\n[bar],\n[baz]\n",
        "[foo]\n\n> [foo]: /url\n", "Foo\n[bar]: /baz\n\n[bar]\n",
        // Paragraphs, blank lines, block quotes
        "aaa\n             bbb\n                                       ccc\n", "  \n\naaa\n  \n\n# aaa\n\n  \n",
        "> # Foo\n> bar\n> baz\n", "> bar\nbaz\n> foo\n", "> foo\n---\n", "> - foo\n- bar\n", ">     foo\n    bar\n",
        "> ```\nfoo\n```\n", "> foo\n    - bar\n", ">\n", "> foo\n\n> bar\n", "> foo\n>\n> bar\n", "> bar\n>\nbaz\n",
        "> > > foo\nbar\n", ">>> foo\n> bar\n>>baz\n",
        // Lists
        "A paragraph\nwith two lines.\n\n    indented code\n\n> A block quote.\n", "- one\n\n two\n", "- one\n\n  two\n",
        " -    one\n\n     two\n", "1.  A paragraph\n    with two lines.\n\n        indented code\n\n    > A block quote.\n",
        "-one\n\n2.two\n", "- foo\n\n\n  bar\n", "1.  foo\n\n    ```\n    bar\n    ```\n\n    baz\n\n    > bam\n",
        "-\n  foo\n-\n  ```\n  bar\n  ```\n-\n      baz\n", "-\n\n  foo\n", "- foo\n-\n- bar\n", "foo\n*\n\nfoo\n1.\n",
        "- a\n - b\n  - c\n   - d\n    - e\n", "1. a\n\n  2. b\n\n    3. c\n", "- a\n- b\n\n- c\n", "* a\n*\n\n* c\n",
        "- a\n- b\n\n  c\n- d\n", "- a\n- b\n\n  [ref]: /url\n- d\n", "- a\n  > b\n  ```\n  c\n  ```\n- d\n",
        "The number of windows in my house is\n14.  The number of doors is 6.\n", "The number of windows in my house is\n1.  The number of doors is 6.\n",
        "- foo\n  - bar\n    - baz\n\n\n      bim\n", "- foo\n- bar\n\n<!-- -->\n\n- baz\n- bim\n",
        "1. ```\n   foo\n   ```\n\n   bar\n", "* foo\n  * bar\n\n  baz\n",
        // Tables (GFM)
        "| foo | bar |\n| --- | --- |\n| baz | bim |\n", "| f\\|oo  |\n| ------ |\n| b `\\|` az |\n| b **\\|** im |\n",
        "| abc | def |\n| --- | --- |\n| bar | baz |\n> bar\n", "| abc | def |\n| --- | --- |\n| bar | baz |\nbar\n\nbar\n",
        "| abc | def |\n| --- |\n| bar |\n", "| abc | def |\n| --- | --- |\n| bar |\n| bar | baz | boo |\n",
        "| abc | def |\n| --- | --- |\n",
        // Task lists, strikethrough, autolinks (GFM)
        "- [ ] foo\n- [x] bar\n", "- [x] foo\n  - [ ] bar\n  - [x] baz\n- [ ] bim\n", "~~Hi~~ Hello, ~there~ world!\n",
        "This ~~has a\n\nnew paragraph~~.\n", "www.commonmark.org/help/:\n\nVisit www.commonmark.org/a.b.\n",
        "(Visit https://encrypted.google.com/search?q=Markup+(business))\n", "foo@bar.baz\n",
        // Inlines across lines
        "*foo\nbar*\n", "**foo\nbar**\n", "`foo\nbar`\n", "foo  \nbaz\n", "foo\\\nbaz\n", "[link\nwith break](/url)\n",
        // Footnotes
        "Here is a footnote reference,[^1] and another.[^longnote]\n\n[^1]: Here is the footnote.\n\n[^longnote]: Here's one with multiple blocks.\n\n    Subsequent paragraphs are indented.\n\n        { some.code(); }\n\n    The whole paragraph can be indented.\n\nThis paragraph won't be part of the note.\n",
    ]

    let harness = StreamingHarness()

    func testInvariantHoldsForEverySplitOfEveryExample() {
        for (number, example) in Self.examples.enumerated() {
            let mayPatch = example.contains("]:")
            for (cut, pieces) in StreamingHarness.twoPieceSplits(example).enumerated() {
                let outcome = harness.run(pieces, label: "example \(number) cut \(cut)")
                if !mayPatch {
                    XCTAssertEqual(outcome.final.patch, [], "example \(number) cut \(cut): \(example.debugDescription)")
                }
            }
        }
    }

    func testInvariantHoldsStreamingEachExampleOneScalarAtATime() {
        for (number, example) in Self.examples.enumerated() {
            let outcome = harness.run(StreamingHarness.scalarPieces(example), label: "example \(number)")
            if !example.contains("]:") {
                XCTAssertEqual(outcome.final.patch, [], "example \(number): \(example.debugDescription)")
            }
        }
    }

    func testInvariantHoldsWithCRLFLineEndings() {
        for (number, example) in Self.examples.enumerated() {
            let crlf = example.replacingOccurrences(of: "\n", with: "\r\n")
            harness.run(StreamingHarness.scalarPieces(crlf), label: "CRLF example \(number)")
            harness.run(StreamingHarness.randomPieces(crlf, seed: UInt64(number) + 1), label: "CRLF example \(number) random")
        }
    }

    func testInvariantHoldsForRandomConcatenationsOfExamples() {
        var generator = SplitMix64(seed: 42)
        for round in 0..<300 {
            var text = ""
            for _ in 0..<4 {
                text += Self.examples.randomElement(using: &generator) ?? ""
                if Bool.random(using: &generator) { text += "\n" }
            }
            let pieces = StreamingHarness.randomPieces(text, seed: UInt64(round), maxLength: 6)
            let outcome = harness.run(pieces, label: "round \(round): \(text.debugDescription)")
            if !text.contains("]:") {
                XCTAssertEqual(outcome.final.patch, [], "round \(round): \(text.debugDescription)")
            }
        }
    }

    func testInvariantHoldsForEverySplitWhenOpenBlocksAreParsedLate() {
        let lazy = StreamingHarness(policy: ReparsePolicy(smallRegionBytes: 0, growth: 0.25, interval: .seconds(3600)))
        for (number, example) in Self.examples.enumerated() {
            for (cut, pieces) in StreamingHarness.twoPieceSplits(example).enumerated() {
                lazy.run(pieces, label: "late parse, example \(number) cut \(cut)")
            }
            lazy.run(StreamingHarness.scalarPieces(example), label: "late parse, example \(number) by scalars")
        }
    }
}
