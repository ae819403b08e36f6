import Foundation
import ParleyAuth
import ParleyTestSupport
import XCTest

/// Text documents are checked in the server's own process: with a media worker that decodes nothing
/// (`/bin/false` as `parley-media-worker`: a missing one is a startup error, MediaWorkerStartupTests),
/// text, Markdown, CSV and JSON still upload (UTF-8 counted across the pieces the body arrives in,
/// the hash of the bytes as sent), and text that is not UTF-8 or JSON that does not parse is still
/// refused with its reason. Only an image needs the worker.
final class TextDocumentUploadTests: XCTestCase {
    private var parley: TestParley!

    override func setUp() async throws {
        parley = try TestParley(["PARLEY_MAX_FILE_BYTES": "4000000"]) { configuration in
            configuration.media.workerExecutable = URL(fileURLWithPath: "/bin/false")
        }
    }

    override func tearDown() async throws {
        await parley.stop()
    }

    func testTextDocumentsNeedNoWorkerAndTheirCharactersAreCountedAcrossPieces() async throws {
        // 2- 3- and 4-byte scalars at every offset, over many of the pieces a body arrives in.
        let line = "aé€😀 ünïcödé ✓\n"
        for (name, multipart, type) in [("notes.txt", false, "text/plain"), ("notes.md", true, "text/markdown"),
                                        ("table.csv", true, "text/csv")] {
            // Distinct bytes per file (the same bytes twice are one file).
            let text = name + "\n" + String(repeating: line, count: 30_000)
            let bytes = Array(text.utf8)
            let created = try await parley.upload(bytes, filename: name, multipart: multipart)
            XCTAssertEqual(created.status, 201, "\(name): \(created.text)")
            XCTAssertEqual(created.json["media_type"] as? String, type)
            XCTAssertEqual(created.json["text_chars"] as? Int, text.unicodeScalars.count, name)
            XCTAssertEqual(created.json["bytes"] as? Int, bytes.count)
            XCTAssertEqual(created.json["sha256"] as? String, SHA256Digest.hex(of: bytes), "the hash of the bytes as sent")
            if name == "notes.txt" {
                let again = try await parley.upload(bytes, filename: "copy.txt", multipart: true)
                XCTAssertEqual(again.status, 200, "the same bytes again are the same file")
                XCTAssertEqual(again.json["id"] as? String, created.json["id"] as? String)
            }
        }
        let json = try await parley.upload(Array(#"{"a": [1, 2.5, "é", null, true, {"b": []}]}"#.utf8), filename: "data.json")
        XCTAssertEqual(json.status, 201, json.text)
        XCTAssertEqual(json.json["media_type"] as? String, "application/json")
        let scalar = try await parley.upload(Array("42".utf8), filename: "n.json")
        XCTAssertEqual(scalar.status, 201, "a top-level scalar is JSON: \(scalar.text)")

        let image = try await parley.upload(TestPNG.make(width: 20, height: 20), filename: "a.png")
        XCTAssertEqual(image.status, 400, "an image still needs the worker, which decodes nothing here")
        XCTAssertEqual(image.errorCode, "invalid_file")
    }

    func testTextThatIsNotUTF8OrJSONThatDoesNotParseIsRefusedWithoutAWorker() async throws {
        let valid = [UInt8](repeating: UInt8(ascii: "x"), count: 100_000)
        let cases: [(bytes: [UInt8], name: String, reason: String)] = [
            // Past the sniffer's first 4 KiB: only the check over the whole file sees it.
            (valid + [0xC3, 0x28] + valid, "late.txt", "UTF-8"),
            (valid + [0xED, 0xA0, 0x80], "surrogate.txt", "UTF-8"),
            (valid + [0xE2, 0x82], "cut-at-the-end.txt", "UTF-8"),
            (Array(#"{"a": [1, 2}"#.utf8), "broken.json", "does not parse"),
            (Array(#"{"a": 1} {"b": 2}"#.utf8), "two.json", "does not parse"),
            (Array(String(repeating: "[", count: 600).utf8) + Array(String(repeating: "]", count: 600).utf8),
             "deep.json", "deeper than 512"),
        ]
        for multipart in [false, true] {
            for (bytes, name, reason) in cases {
                let refused = try await parley.upload(bytes, filename: name, multipart: multipart)
                XCTAssertEqual(refused.status, 400, "\(name): \(refused.text)")
                XCTAssertEqual(refused.errorCode, "invalid_text", name)
                XCTAssertTrue(refused.text.contains(reason), "\(name): \(refused.text)")
            }
        }
        let list = try await parley.call("GET", "/api/files")
        XCTAssertEqual((list.json["items"] as? [[String: Any]])?.count, 0, "nothing refused is stored")
    }
}
