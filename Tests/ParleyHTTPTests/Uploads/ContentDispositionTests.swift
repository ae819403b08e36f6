import ParleyHTTP
import XCTest

/// Names from users in `Content-Disposition`: never a path, never a header break, always readable.
final class ContentDispositionTests: XCTestCase {
    func testPathsControlsAndQuotesNeverReachTheHeader() {
        XCTAssertEqual(ContentDisposition(.attachment, filename: "../../etc/passwd").filename, "passwd")
        XCTAssertEqual(ContentDisposition(.attachment, filename: "..\\..\\boot.ini").filename, "boot.ini")
        let hostile = ContentDisposition(.attachment, filename: "a\r\nSet-Cookie: x=1\u{0}\"b.txt")
        XCTAssertEqual(hostile.filename, "aSet-Cookie: x=1b.txt")
        XCTAssertFalse(hostile.value.contains("\r") || hostile.value.contains("\n"))
        XCTAssertEqual(ContentDisposition(.attachment, filename: ".hidden").filename, "hidden")
        XCTAssertEqual(ContentDisposition(.attachment, filename: "../").filename, "file", "nothing left: the fallback")
        XCTAssertEqual(ContentDisposition(.attachment, filename: "\u{202E}gpj.exe").filename, "gpj.exe",
                       "a right-to-left override (a format character) cannot disguise the extension")
    }

    func testUnicodeNamesKeepAnASCIIFallback() {
        let value = ContentDisposition(.inline, filename: "Résumé 2026.pdf").value
        XCTAssertEqual(value, "inline; filename=\"R_sum_ 2026.pdf\"; filename*=UTF-8''R%C3%A9sum%C3%A9%202026.pdf")
        XCTAssertEqual(ContentDisposition(.attachment, filename: "notes.md").value, "attachment; filename=\"notes.md\"")
    }

    func testLongNamesAreCutKeepingTheExtension() {
        let name = ContentDisposition(.attachment, filename: String(repeating: "a", count: 500) + ".png").filename
        XCTAssertEqual(name.count, ContentDisposition.maxCharacters)
        XCTAssertTrue(name.hasSuffix(".png"))
    }
}
