import ParleyMedia
import XCTest

/// The kind comes from the bytes: signatures for images and PDF, UTF-8 plus extension for text,
/// and a refusal that names what else was found.
final class FileSnifferTests: XCTestCase {
    private func sniff(_ bytes: [UInt8], _ name: String = "file") throws(MediaError) -> SniffedFormat {
        try FileSniffer.sniff(head: bytes, filename: name, complete: true)
    }

    func testSignaturesDecideTheKindWhateverTheName() throws {
        XCTAssertEqual(try sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0], "x.txt"), .png)
        XCTAssertEqual(try sniff([0xFF, 0xD8, 0xFF, 0xE0], "x.png"), .jpeg)
        XCTAssertEqual(try sniff(Array("GIF89a..".utf8)), .gif)
        XCTAssertEqual(try sniff(Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)), .webp)
        XCTAssertEqual(try sniff(Array("%PDF-1.7\n".utf8), "x.csv"), .pdf)
        XCTAssertEqual(try sniff(Array("junk\n%PDF-1.4\n".utf8)), .pdf)
    }

    func testTextTypesComeFromTheExtension() throws {
        let text = Array("hello\n".utf8)
        XCTAssertEqual(try sniff(text, "a.MD"), .text(mediaType: "text/markdown"))
        XCTAssertEqual(try sniff(text, "a.markdown"), .text(mediaType: "text/markdown"))
        XCTAssertEqual(try sniff(text, "a.csv"), .text(mediaType: "text/csv"))
        XCTAssertEqual(try sniff(text, "a.json"), .text(mediaType: "application/json"))
        XCTAssertEqual(try sniff(text, "a.py"), .text(mediaType: "text/plain"))
        XCTAssertEqual(try sniff(text, ".bashrc"), .text(mediaType: "text/plain"))
        XCTAssertEqual(SniffedFormat.text(mediaType: "text/csv").kind, .document)
    }

    func testOtherFilesAreRefusedNamingWhatTheyAre() {
        let cases: [([UInt8], String, MediaError)] = [
            ([], "a.png", .empty),
            ([0x50, 0x4B, 0x03, 0x04, 0], "a.zip", .unsupported(found: "a ZIP archive")),
            ([0x50, 0x4B, 0x03, 0x04, 0], "a.docx", .unsupported(found: "a Word document (a ZIP archive)")),
            ([0x1F, 0x8B, 8, 0], "a.gz", .unsupported(found: "a gzip archive")),
            ([0x7F, 0x45, 0x4C, 0x46, 2], "a", .unsupported(found: "an executable (ELF)")),
            ([0, 0, 0, 0x18] + Array("ftypheic".utf8), "a.heic", .unsupported(found: "a HEIF/AVIF image")),
            (Array("<svg xmlns='http://www.w3.org/2000/svg'/>".utf8), "a.txt", .unsupported(found: "an SVG image")),
            (Array("anything".utf8), "a.svg", .unsupported(found: "an SVG image")),
            (Array("just text".utf8), "a.jpg", .unsupported(found: "text named as .jpg")),
            ([0x61, 0xE9, 0x62], "a.txt", .notUTF8),
            ([0x61, 0x00, 0x62], "a.txt", .unsupported(found: "binary data")),
            ([0xFF, 0xFE, 0x61, 0x00], "a.txt", .notUTF8),
        ]
        for (bytes, name, expected) in cases {
            XCTAssertThrowsError(try sniff(bytes, name), name) { XCTAssertEqual($0 as? MediaError, expected, name) }
        }
    }

    func testAnHTMLPageWithAnInlineSVGIsText() throws {
        let page = Array("<!DOCTYPE html><html><body><svg width='1'></svg></body></html>".utf8)
        XCTAssertEqual(try sniff(page, "page.html"), .text(mediaType: "text/plain"))
        let xml = Array("<?xml version='1.0'?>\n<!-- drawn -->\n<svg xmlns='http://www.w3.org/2000/svg'/>".utf8)
        XCTAssertThrowsError(try sniff(xml, "a.xml")) { XCTAssertEqual($0 as? MediaError, .unsupported(found: "an SVG image")) }
    }

    func testACharacterCutAtTheEndOfTheHeadIsNotAFault() throws {
        let cut = Array("caf".utf8) + [0xC3]
        XCTAssertEqual(try FileSniffer.sniff(head: cut, filename: "a.txt", complete: false), .text(mediaType: "text/plain"))
        XCTAssertThrowsError(try FileSniffer.sniff(head: cut, filename: "a.txt", complete: true))
    }
}
