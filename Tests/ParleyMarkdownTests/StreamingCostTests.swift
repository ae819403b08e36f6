import XCTest
@testable import ParleyMarkdown

/// The streaming cost is linear in the reply's length. Times are printed for the report, never
/// asserted; the linearity check counts parsed bytes. The comparison with a full re-render per
/// piece (quadratic) is a measurement, not a check: `make bench` (parley-markdown-bench) prints it.
final class StreamingCostTests: XCTestCase {
    /// A realistic answer of at least `bytes` UTF-8 bytes: headings, paragraphs, lists, code, tables.
    static func answer(bytes: Int) -> String {
        var text = ""
        var section = 0
        while text.utf8.count < bytes {
            section += 1
            text += """
                ## Step \(section): configure the *service*

                This paragraph explains the step in some detail, with `inline code`, a [link](https://example.com/\(section))
                and **bold text** spread over two lines so the parser has inline work to do.

                - First point about step \(section)
                - Second point, with a nested list:
                  - nested a
                  - nested b
                - Third point

                ```swift
                func step\(section)() -> [Int] {
                    return [1, 2, 3].map { $0 * \(section) }
                }
                ```

                | Option | Default | Meaning |
                |:-------|:-------:|--------:|
                | alpha  | 1       | first   |
                | beta   | 2       | second  |

                > Note: remember step \(section) — 日本語 ✓


                """
        }
        return text
    }

    static func pieces(of text: String, scalars: Int) -> [String] {
        let all = Array(text.unicodeScalars)
        return stride(from: 0, to: all.count, by: scalars).map {
            String(String.UnicodeScalarView(all[$0..<min(all.count, $0 + scalars)]))
        }
    }

    private func streamStable(_ pieces: [String]) -> (seconds: Double, parsedBytes: Int, blocks: Int) {
        let clock = ContinuousClock()
        var markdown = StableMarkdown()
        var parsed = 0
        var blocks = 0
        let elapsed = clock.measure {
            for piece in pieces { blocks += markdown.append(piece).blocks.count }
            parsed = markdown.parsedByteCount
            blocks += markdown.finish().blocks.count
        }
        return (elapsed.seconds, parsed, blocks)
    }

    func testStreamingCostGrowsLinearlyWithReplyLength() {
        let small = Self.answer(bytes: 20_000)
        let large = Self.answer(bytes: 80_000)
        let smallRun = streamStable(Self.pieces(of: small, scalars: 5))
        let largeRun = streamStable(Self.pieces(of: large, scalars: 5))
        print("""
            [cost] StableMarkdown, 5-scalar pieces: \(small.utf8.count) B in \(ms(smallRun.seconds)) ms \
            (\(smallRun.parsedBytes) B parsed, \(smallRun.blocks) blocks); \(large.utf8.count) B in \
            \(ms(largeRun.seconds)) ms (\(largeRun.parsedBytes) B parsed, \(largeRun.blocks) blocks)
            """)
        let lengthRatio = Double(large.utf8.count) / Double(small.utf8.count)
        let parsedRatio = Double(largeRun.parsedBytes) / Double(smallRun.parsedBytes)
        XCTAssertLessThan(parsedRatio, lengthRatio * 1.2, "parsed bytes must grow linearly")
        XCTAssertLessThan(smallRun.parsedBytes, small.utf8.count * 10)
    }

    private func ms(_ seconds: Double) -> String { String(format: "%.1f", seconds * 1000) }
}

extension Duration {
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
