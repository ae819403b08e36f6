import XCTest
import Foundation
@testable import ParleyMarkdown

/// The closing-fence rule (CommonMark 0.30, 4.5) exists twice: `LineIndex` here and the page's
/// `closesFence` (Public/message/code-fence.js). Both are checked against the same cases,
/// Tests/fixtures/closing-fences.json (the page's side: Tests/browser/test_fence_rule.py), and cmark-gfm
/// itself is asked each case, so the file cannot drift from the reference parser either.
final class ClosingFenceCasesTests: XCTestCase {
    struct Case: Decodable {
        let fence: String
        let line: String
        let closes: Bool
        let why: String?
    }

    /// Tests/fixtures/closing-fences.json, found from this file's path (no bundle resources).
    static func cases() throws -> [Case] {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("fixtures/closing-fences.json")
        return try JSONDecoder().decode([Case].self, from: Data(contentsOf: url))
    }

    /// The opening fence's character and length, as cmark reads them: up to 3 spaces, then the run.
    private func fence(of line: String) -> (character: UInt8, length: Int) {
        let bytes = Array(line.utf8).drop { $0 == 0x20 }
        let character = bytes.first!
        return (character, bytes.prefix { $0 == character }.count)
    }

    func testTheCasesAreMany() throws {
        let cases = try Self.cases()
        XCTAssertGreaterThanOrEqual(cases.count, 30)
        XCTAssertTrue(cases.contains { $0.closes } && cases.contains { !$0.closes })
    }

    func testLineIndexFollowsTheCases() throws {
        for item in try Self.cases() {
            let (character, length) = fence(of: item.fence)
            let bytes = Array(item.line.utf8)[...]
            let label = "\(item.why ?? ""): fence \(item.fence.debugDescription), line \(item.line.debugDescription)"
            XCTAssertEqual(LineIndex(bytes).isClosingFence(line: 1, character: character, length: length),
                           item.closes, label)
            // The same rule scanned in place (the pieces of a streaming fence), with each line ending.
            for ending in ["", "\n", "\r\n", "\r"] {
                let text = Array((item.line + ending).utf8)[...]
                XCTAssertEqual(LineIndex.containsClosingFence(text, character: character, length: length),
                               item.closes, "\(label), ending \(ending.debugDescription)")
            }
        }
    }

    /// cmark-gfm is the reference: a line closes the fence when the code block holds nothing, as if
    /// the text had ended after the opening fence.
    func testCmarkAgreesWithTheCases() throws {
        let renderer = MarkdownRenderer()
        for item in try Self.cases() {
            let closed = renderer.render(item.fence + "\n" + item.line + "\n") == renderer.render(item.fence + "\n")
            XCTAssertEqual(closed, item.closes,
                           "\(item.why ?? ""): fence \(item.fence.debugDescription), line \(item.line.debugDescription)")
        }
    }
}
