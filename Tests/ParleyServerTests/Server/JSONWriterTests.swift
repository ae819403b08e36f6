import Foundation
@testable import ParleyAPI
@testable import ParleyServer
import XCTest

/// The byte-level JSON string escaping used for every event payload.
final class JSONWriterTests: XCTestCase {
    private func literal(_ value: String) -> String {
        var out = ""
        JSONWriter.appendString(value, to: &out)
        return out
    }

    func testEscapesQuotesBackslashesControlsAndLineSeparators() {
        XCTAssertEqual(literal("a\"b\\c\nd\re\tf\u{01}g\u{1F}"), #""a\"b\\c\nd\re\tf\u0001g\u001f""#)
        XCTAssertEqual(literal("x\u{2028}y\u{2029}z"), #""x\u2028y\u2029z""#)
    }

    func testKeepsOtherTextByteForByteAndRoundTrips() throws {
        let samples = ["", "plain", "é\u{301}\"\u{301}", "日本語 🎉", "\u{2027}\u{202A}€", "\u{E2}", "w1 .\n\n"]
        for sample in samples {
            let decoded = try JSONSerialization.jsonObject(with: Data(literal(sample).utf8), options: .fragmentsAllowed)
            XCTAssertEqual(decoded as? String, sample)
        }
        XCTAssertEqual(literal("日本語 🎉"), "\"日本語 🎉\"")
    }
}
