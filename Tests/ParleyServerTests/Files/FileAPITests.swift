import Foundation
import ParleyTestSupport
import XCTest

/// `/api/files` through a real server: uploads decoded by the real `parley media-worker` (libvips),
/// stored in the real files database, served back whole, in ranges and as thumbnails; sent with a
/// message to the demo model, which describes what it received.
final class FileAPITests: XCTestCase {
    private var parley: TestParley!

    override func setUp() async throws {
        parley = try TestParley(["PARLEY_MAX_USER_FILE_BYTES": "2000000"])
    }

    override func tearDown() async throws {
        await parley.stop()
    }

    /// A raw upload (`?filename=`), or multipart when `multipart` is true.
    private func download(_ path: String, headers: [(String, String)] = []) async throws -> TestHTTPClient.Response {
        let url = parley.base + path
        return try await Blocking.run { try TestHTTPClient().request("GET", url, headers: headers, timeout: 30) }
    }

    func testAnImageIsStoredReencodedServedAndDeduplicated() async throws {
        let png = TestPNG.make(width: 300, height: 200)
        let created = try await parley.upload(png, filename: "../shot\u{7}.png", multipart: true)
        XCTAssertEqual(created.status, 201, created.text)
        let file = created.json
        let id = try XCTUnwrap(file["id"] as? String)
        XCTAssertEqual(file["kind"] as? String, "image")
        XCTAssertEqual(file["media_type"] as? String, "image/png")
        XCTAssertEqual(file["width"] as? Int, 300)
        XCTAssertEqual(file["height"] as? Int, 200)
        XCTAssertEqual(file["filename"] as? String, "shot.png", "path and control characters are gone from the name")

        let served = try await download("/api/files/\(id)")
        XCTAssertEqual(served.status, 200)
        XCTAssertEqual(served.header("content-type"), "image/png")
        XCTAssertEqual(served.header("content-length"), String(served.body.count))
        XCTAssertEqual(served.body.count, file["bytes"] as? Int, "bytes describes the stored (re-encoded) file")
        XCTAssertEqual(served.header("x-content-type-options"), "nosniff")
        XCTAssertTrue(served.header("content-disposition")?.hasPrefix("inline; filename=\"shot.png\"") == true)
        XCTAssertEqual(Array(served.body.prefix(8)), Array(png.prefix(8)), "a PNG comes back a PNG")

        let range = try await download("/api/files/\(id)", headers: [("Range", "bytes=4-11")])
        XCTAssertEqual(range.status, 206)
        XCTAssertEqual(range.body, Array(served.body[4..<12]))
        XCTAssertEqual(range.header("content-range"), "bytes 4-11/\(served.body.count)")
        let past = try await download("/api/files/\(id)", headers: [("Range", "bytes=99999999-")])
        XCTAssertEqual(past.status, 416)

        let thumb = try await download("/api/files/\(id)?variant=thumb")
        XCTAssertEqual(thumb.status, 200)
        XCTAssertTrue(thumb.header("content-type")?.hasPrefix("image/") == true)
        XCTAssertLessThan(thumb.body.count, served.body.count)

        let again = try await parley.upload(png, filename: "other-name.png")
        XCTAssertEqual(again.status, 200, "the same bytes twice are one file")
        XCTAssertEqual(again.json["id"] as? String, id)
        let list = try await parley.call("GET", "/api/files")
        XCTAssertEqual((list.json["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String }, [id])
    }

    func testDocumentsAreTextAndBadFilesAreClearRefusals() async throws {
        let markdown = try await parley.upload(Array("# Notes\n\nSome *text* é.".utf8), filename: "notes.md")
        XCTAssertEqual(markdown.status, 201, markdown.text)
        XCTAssertEqual(markdown.json["kind"] as? String, "document")
        XCTAssertEqual(markdown.json["media_type"] as? String, "text/markdown")
        XCTAssertEqual(markdown.json["text_chars"] as? Int, 23)
        let id = try XCTUnwrap(markdown.json["id"] as? String)
        let served = try await download("/api/files/\(id)")
        XCTAssertEqual(served.header("content-type"), "text/markdown; charset=utf-8")
        XCTAssertTrue(served.header("content-disposition")?.hasPrefix("attachment;") == true)

        let cases: [([UInt8], String, Int, String)] = [
            ([], "empty.txt", 400, "empty_file"),
            ([0x50, 0x4B, 0x03, 0x04] + [UInt8](repeating: 0, count: 40), "archive.zip", 415, "unsupported_file"),
            (Array("<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8), "x.svg", 415, "unsupported_file"),
            ([0x66, 0xFF, 0xFE, 0x41], "latin1.txt", 400, "invalid_text"),
            (Array("{\"a\": ".utf8), "broken.json", 400, "invalid_text"),
            (Array(TestPNG.make(width: 64, height: 64).prefix(60)), "cut.png", 400, "invalid_file"),
        ]
        for (bytes, name, status, code) in cases {
            let refused = try await parley.upload(bytes, filename: name)
            XCTAssertEqual(refused.status, status, "\(name): \(refused.text)")
            XCTAssertEqual(refused.errorCode, code, name)
        }
        let list = try await parley.call("GET", "/api/files")
        XCTAssertEqual((list.json["items"] as? [[String: Any]])?.count, 1, "nothing of the refused files is stored")
        for limit in ["0", "201", "x"] {
            let bad = try await parley.call("GET", "/api/files?limit=\(limit)")
            XCTAssertEqual(bad.status, 400, "limit=\(limit)")
        }
        let one = try await parley.call("GET", "/api/files?limit=1")
        XCTAssertEqual((one.json["items"] as? [[String: Any]])?.count, 1)
    }

    func testTheUserTotalIsEnforcedBeforeAndAfterTheBody() async throws {
        let big = TestPNG.make(width: 900, height: 900, seed: 1)  // ~2.4 MB raw, over the 2 MB total
        let refused = try await parley.upload(big, filename: "big.png")
        XCTAssertEqual(refused.status, 413)
        XCTAssertEqual(refused.errorCode, "quota_exceeded")
    }

    func testAMessageCarriesItsFilesToTheModelAndStillShowsAFileDeletedLater() async throws {
        let image = try await parley.upload(TestPNG.make(width: 40, height: 30, seed: 2), filename: "a.png")
        let document = try await parley.upload(Array("alpha beta".utf8), filename: "words.txt")
        let imageID = try XCTUnwrap(image.json["id"] as? String)
        let documentID = try XCTUnwrap(document.json["id"] as? String)
        let conversation = try await parley.conversation()
        let (user, assistant) = try await parley.send(conversation, "What is this?",
                                                      extra: ["attachments": [imageID, documentID]])
        let answer = try await parley.finished(assistant)
        let text = answer["content"] as? String ?? ""
        XCTAssertTrue(text.contains("40×30 PNG"), text)
        XCTAssertTrue(text.contains("words.txt"), text)
        let shown = try await parley.message(user)
        let parts = (shown["parts"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == "file" }
        XCTAssertEqual(parts.compactMap { $0["file_id"] as? String }, [imageID, documentID])
        XCTAssertEqual(parts.first?["kind"] as? String, "image")

        let deleted = try await parley.call("DELETE", "/api/files/\(imageID)")
        XCTAssertEqual(deleted.status, 200)
        XCTAssertEqual(deleted.json["deleted"] as? Bool, false)
        XCTAssertEqual(deleted.json["kept_for_messages"] as? Int, 1)
        let stillServed = try await download("/api/files/\(imageID)")
        XCTAssertEqual(stillServed.status, 200, "the message still shows it")
        let resend = try await parley.call("POST", "/api/conversations/\(conversation)/messages",
                                           json: ["content": "again", "attachments": [imageID]])
        XCTAssertEqual(resend.status, 404, "a deleted file cannot be sent again")
        let unknown = try await parley.call("POST", "/api/conversations/\(conversation)/messages",
                                            json: ["content": "x", "attachments": ["nope"]])
        XCTAssertEqual(unknown.status, 404)
        let tooMany = try await parley.call("POST", "/api/conversations/\(conversation)/messages",
                                            json: ["content": "x", "attachments": Array(repeating: documentID, count: 11)])
        XCTAssertEqual(tooMany.status, 400)

        let removed = try await parley.call("DELETE", "/api/conversations/\(conversation)")
        XCTAssertTrue((200..<300).contains(removed.status))
        let gone = try await download("/api/files/\(imageID)")
        XCTAssertEqual(gone.status, 404, "the kept file goes with the last message that held it")
    }

    func testAnEditKeepsTheFilesOfTheMessageItReplacesAndAForkCarriesThem() async throws {
        let document = try await parley.upload(Array("one two three".utf8), filename: "count.txt")
        let documentID = try XCTUnwrap(document.json["id"] as? String)
        let conversation = try await parley.conversation()
        let (_, first) = try await parley.send(conversation, "Read it", extra: ["attachments": [documentID]])
        _ = try await parley.finished(first)
        // Edit the first message (a new root): its file comes along unless `attachments` says otherwise.
        let edit = try await parley.call("POST", "/api/conversations/\(conversation)/messages",
                                         json: ["content": "Read it again", "parent_id": NSNull()])
        XCTAssertEqual(edit.status, 201, edit.text)
        let editedParts = (edit.json["user_message"] as? [String: Any])?["parts"] as? [[String: Any]] ?? []
        XCTAssertEqual(editedParts.filter { $0["type"] as? String == "file" }.compactMap { $0["file_id"] as? String },
                       [documentID])
        let editedReply = try XCTUnwrap((edit.json["assistant_message"] as? [String: Any])?["id"] as? String)
        let answer = try await parley.finished(editedReply)
        XCTAssertTrue((answer["content"] as? String ?? "").contains("count.txt"), "the model got the file again")
        let replaced = try await parley.call("POST", "/api/conversations/\(conversation)/messages",
                                             json: ["content": "No file", "parent_id": NSNull(), "attachments": []])
        XCTAssertEqual(replaced.status, 201, replaced.text)
        let bare = (replaced.json["user_message"] as? [String: Any])?["parts"] as? [[String: Any]] ?? []
        XCTAssertTrue(bare.allSatisfy { $0["type"] as? String != "file" }, "attachments: [] removes them")

        let fork = try await parley.call("POST", "/api/conversations/\(conversation)/fork", json: ["message_id": editedReply])
        XCTAssertEqual(fork.status, 201, fork.text)
        let forkedUser = (fork.json["messages"] as? [[String: Any]])?.first
        let forkedParts = forkedUser?["parts"] as? [[String: Any]] ?? []
        XCTAssertEqual(forkedParts.filter { $0["type"] as? String == "file" }.compactMap { $0["file_id"] as? String },
                       [documentID], "the fork's copy shows the same file")
    }
}
