import Foundation
import ParleyMedia
import XCTest

/// Documents through the real worker: PDF text by poppler (PDFs written as literal PDF text by
/// PDFFixtures), text files checked as UTF-8 and JSON, their media type chosen by extension.
final class DocumentProcessingTests: XCTestCase {
    func testAPDFsTextComesPageByPageWithItsPageCount() async throws {
        let input = try file("two.pdf", PDFFixtures.pages(["Hello page one", "Second page here"]))
        let media = try await processed(try makeProcessor(), input)
        XCTAssertEqual(media.kind, .document)
        XCTAssertEqual(media.mediaType, "application/pdf")
        XCTAssertEqual(media.pages, 2)
        XCTAssertEqual(media.content, input, "a document is stored as given")
        let text = try String(contentsOf: try XCTUnwrap(media.text), encoding: .utf8)
        let pages = text.split(separator: "\u{0C}").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        XCTAssertEqual(pages, ["Hello page one", "Second page here"])
        XCTAssertEqual(media.textCharacters, text.unicodeScalars.count)
        XCTAssertNil(media.note)
        XCTAssertNil(media.thumbnail)
    }

    func testAPDFWithoutTextGetsTheNote() async throws {
        let input = try file("scan.pdf", PDFFixtures.pages(["", ""]))
        let media = try await processed(try makeProcessor(), input)
        XCTAssertEqual(media.pages, 2)
        XCTAssertEqual(media.note, "no extractable text")
        XCTAssertNil(media.text)
        XCTAssertEqual(media.textCharacters, 0)
    }

    func testAPDFOverThePageLimitIsRefused() async throws {
        let input = try file("three.pdf", PDFFixtures.pages(["a", "b", "c"]))
        let error = await refusal(try makeProcessor { $0.pdfMaxPages = 2 }, input)
        XCTAssertEqual(error, .tooManyPages(3))
    }

    func testTextFilesAreTheirOwnTextTypedByExtension() async throws {
        let processor = try makeProcessor()
        let cases: [(String, String, String)] = [
            ("notes.md", "# Título\n\nCafé ☕\n", "text/markdown"),
            ("rows.csv", "a,b\n1,2\n", "text/csv"),
            ("data.json", #"{"k": [1, 2, {"é": null}]}"#, "application/json"),
            ("main.swift", "print(\"hi\")\n", "text/plain"),
            ("README", "plain words\n", "text/plain"),
        ]
        for (name, text, mediaType) in cases {
            let input = try file(name, Data(text.utf8))
            let media = try await processed(processor, input)
            XCTAssertEqual(media.kind, .document, name)
            XCTAssertEqual(media.mediaType, mediaType, name)
            XCTAssertEqual(media.text, input, name)
            XCTAssertEqual(media.textCharacters, text.unicodeScalars.count, name)
        }
    }

    func testInvalidJSONAndNonUTF8TextAreRefusedWithTheirReason() async throws {
        let processor = try makeProcessor()
        let json = try file("broken.json", Data(#"{"a": [1, 2}"#.utf8))
        guard case .invalidJSON(let reason) = await refusal(processor, json) else { return XCTFail("not invalidJSON") }
        XCTAssertFalse(reason.isEmpty)
        // Latin-1 "café" (0xE9): not UTF-8, in the first bytes and, past the sniffer's head, later on.
        let latin1 = try file("latin1.txt", Data([0x63, 0x61, 0x66, 0xE9, 0x0A]))
        let error = await refusal(processor, latin1)
        XCTAssertEqual(error, .notUTF8)
        let late = try file("late.txt", Data(String(repeating: "ok ", count: 3000).utf8) + Data([0xE9, 0x0A]))
        let lateError = await refusal(processor, late)
        XCTAssertEqual(lateError, .notUTF8)
    }
}
