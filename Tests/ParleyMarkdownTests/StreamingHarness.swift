import XCTest
@testable import ParleyMarkdown
import ParleyTestSupport

/// Streams pieces through StableMarkdown and checks the contract at every step and at the end.
struct StreamingHarness {
    let renderer = MarkdownRenderer()
    /// `.everyLine` parses on each new line as before issue 11; a small `smallRegionBytes` makes the
    /// short test documents take the deferred-parse path of long blocks.
    var policy = ReparsePolicy()

    struct Outcome {
        var committed: [String] = []
        var final = MarkdownFinal(patch: [], blocks: [], blockCount: 0)
        var reconciled: [String] = []
    }

    /// Feeds `pieces`, asserting: block indexes are consecutive (a committed block is never sent
    /// again), the tail is the text after the committed part, a client that applies each tail change
    /// (replace or append) holds exactly that tail, and committed + patch + final blocks equal
    /// `render(whole)` byte for byte.
    @discardableResult
    func run(_ pieces: [String], label: String, file: StaticString = #filePath, line: UInt = #line) -> Outcome {
        var markdown = StableMarkdown(renderer: renderer, policy: policy)
        var outcome = Outcome()
        var sent = ""
        var shownTail = ""
        for piece in pieces {
            sent += piece
            let update = markdown.append(piece)
            for block in update.blocks {
                XCTAssertEqual(block.index, outcome.committed.count, "\(label): index gap", file: file, line: line)
                outcome.committed.append(block.html)
            }
            XCTAssertTrue(sent.utf8.elementsEqual(markdown.text.utf8), "\(label): text", file: file, line: line)
            switch update.tail {
            case .unchanged: break
            case .replaced(let tail): shownTail = tail
            case .appended(let text):
                XCTAssertTrue(update.blocks.isEmpty, "\(label): a commit must replace the tail", file: file, line: line)
                shownTail += text
            }
            XCTAssertTrue(shownTail.utf8.elementsEqual(markdown.tail.utf8), "\(label): tail rebuilt from changes",
                          file: file, line: line)
            XCTAssertTrue(sent.utf8.reversed().starts(with: markdown.tail.utf8.reversed()),
                          "\(label): tail is not a suffix", file: file, line: line)
        }
        XCTAssertEqual(markdown.blocks, outcome.committed, "\(label): snapshot", file: file, line: line)
        let final = markdown.finish()
        outcome.final = final
        var blocks = outcome.committed
        for block in final.patch {
            XCTAssertTrue(blocks.indices.contains(block.index), "\(label): patch outside committed", file: file, line: line)
            if blocks.indices.contains(block.index) { blocks[block.index] = block.html }
        }
        for block in final.blocks {
            XCTAssertEqual(block.index, blocks.count, "\(label): final index gap", file: file, line: line)
            blocks.append(block.html)
        }
        XCTAssertEqual(final.blockCount, blocks.count, "\(label): blockCount", file: file, line: line)
        XCTAssertEqual(markdown.tail, "", "\(label): tail after finish", file: file, line: line)
        XCTAssertEqual(markdown.blocks, blocks, "\(label): snapshot after finish", file: file, line: line)
        let whole = renderer.render(sent)
        XCTAssertTrue(blocks.joined().utf8.elementsEqual(whole.utf8),
                      "\(label): invariant broken\n--- streamed:\n\(blocks.joined())\n--- whole:\n\(whole)",
                      file: file, line: line)
        outcome.reconciled = blocks
        return outcome
    }

    /// Every way of cutting `text` in two at a Unicode scalar boundary (so "\r\n" and emoji
    /// sequences are split too).
    static func twoPieceSplits(_ text: String) -> [[String]] {
        let scalars = Array(text.unicodeScalars)
        return (0...scalars.count).map { cut in
            [String(String.UnicodeScalarView(scalars[..<cut])), String(String.UnicodeScalarView(scalars[cut...]))]
        }
    }

    /// Pieces of `size` UTF-8 bytes, each cut moved forward to the next character boundary (the
    /// SSE decoder hands over whole characters only).
    static func bytePieces(_ text: String, size: Int) -> [String] {
        let bytes = Array(text.utf8)
        var pieces: [String] = []
        var start = 0
        while start < bytes.count {
            var end = min(bytes.count, start + size)
            while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }  // not inside a character
            pieces.append(String(decoding: bytes[start..<end], as: UTF8.self))
            start = end
        }
        return pieces
    }

    /// One Unicode scalar per piece.
    static func scalarPieces(_ text: String) -> [String] {
        text.unicodeScalars.map { String($0) }
    }

    /// Random pieces of 1 to `maxLength` scalars, reproducible from `seed`.
    static func randomPieces(_ text: String, seed: UInt64, maxLength: Int = 12) -> [String] {
        var generator = SplitMix64(seed: seed)
        let scalars = Array(text.unicodeScalars)
        var pieces: [String] = []
        var start = 0
        while start < scalars.count {
            let length = Int.random(in: 1...maxLength, using: &generator)
            let end = min(scalars.count, start + length)
            pieces.append(String(String.UnicodeScalarView(scalars[start..<end])))
            start = end
        }
        return pieces
    }
}
