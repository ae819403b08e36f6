import Foundation
import ParleyTestSupport
import XCTest

/// Images and files sent to `/v1/chat/completions` as OpenAI content parts: stored as the caller's
/// files exactly as uploads, attached to the stored user message, and received by the provider like
/// any attachment (checked here on a fake upstream that records the request). Every refusal is
/// OpenAI's error shape and leaves nothing stored and nothing sent.
final class OpenAIAttachmentTests: XCTestCase {
    private func completion(_ parley: TestParley, _ body: [String: Any], headers: [(String, String)] = [])
        async throws -> TestParley.Reply {
        try await parley.call("POST", "/v1/chat/completions", json: body, headers: headers)
    }

    private func error(_ reply: TestParley.Reply) -> [String: Any] {
        reply.json["error"] as? [String: Any] ?? [:]
    }

    private func dataURL(_ type: String, _ bytes: [UInt8]) -> String {
        "data:\(type);base64," + Data(bytes).base64EncodedString()
    }

    private func imagePart(_ url: String) -> [String: Any] {
        ["type": "image_url", "image_url": ["url": url, "detail": "high"]]
    }

    private func filePart(_ data: String, _ filename: String) -> [String: Any] {
        ["type": "file", "file": ["file_data": data, "filename": filename]]
    }

    private func files(_ parley: TestParley, headers: [(String, String)] = []) async throws -> [[String: Any]] {
        try await parley.call("GET", "/api/files", headers: headers).json["items"] as? [[String: Any]] ?? []
    }

    private func models(_ parley: TestParley) async throws -> [String: Bool] {
        let data = try await parley.call("GET", "/v1/models").json["data"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: data.map { ($0["id"] as? String ?? "", $0["vision"] as? Bool ?? false) })
    }

    func testAnImageURLIsStoredAndReachesTheProviderAsTheStoredImage() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream, ["PARLEY_VISION_MODELS": "openai:*"])
        let vision = try await models(parley)
        XCTAssertEqual(vision["openai:fake"], true, "/v1/models says which models see")
        let png = TestPNG.make(width: 24, height: 12, seed: 5)
        upstream.enqueue(UpstreamStreams.complete(["A small picture."]))
        let reply = try await completion(parley, [
            "model": "openai:fake",
            "messages": [["role": "user", "content": [["type": "text", "text": "look"],
                                                      imagePart(dataURL("image/png", png))]]],
        ])
        XCTAssertEqual(reply.status, 200, reply.text)
        let stored = try await files(parley)
        XCTAssertEqual(stored.count, 1, "stored as the caller's file")
        XCTAssertEqual(stored.first?["kind"] as? String, "image")
        XCTAssertEqual(stored.first?["filename"] as? String, "image.png")
        let id = try XCTUnwrap(stored.first?["id"] as? String)
        let bytes = try await Blocking.run { [base = parley.base] in
            try TestHTTPClient().request(base + "/api/files/\(id)", timeout: 30).body
        }
        XCTAssertNotEqual(bytes, png, "re-encoded as an upload is")
        let messages = upstream.requests.last?.jsonBody?["messages"] as? [[String: Any]] ?? []
        let content = messages.last?["content"] as? [[String: Any]] ?? []
        XCTAssertEqual(content.count, 2)
        XCTAssertEqual(content.first?["type"] as? String, "text")
        XCTAssertEqual(content.first?["text"] as? String, "look")
        XCTAssertEqual((content.last?["image_url"] as? [String: Any])?["url"] as? String,
                       dataURL("image/png", bytes), "the provider receives the stored bytes exactly")

        let conversation = try XCTUnwrap(reply.headers["x-parley-conversation"])
        let shown = try await parley.call("GET", "/api/conversations/\(conversation)")
        let user = try XCTUnwrap((shown.json["messages"] as? [[String: Any]])?.first?["id"] as? String)
        let message = try await parley.message(user)
        let parts = message["parts"] as? [[String: Any]] ?? []
        XCTAssertEqual(parts.filter { $0["type"] as? String == "file" }.compactMap { $0["file_id"] as? String }, [id],
                       "the user message carries the file: \(message)")

        // The same bytes again (here under the conversation, in a message of their own after one of
        // text: one user turn) are the same file.
        upstream.enqueue(UpstreamStreams.complete(["Still small."]))
        let again = try await completion(parley, [
            "model": "openai:fake", "messages": [["role": "user", "content": "again:"],
                                                 ["role": "user", "content": [imagePart(dataURL("image/png", png))]]],
        ], headers: [("X-Parley-Conversation", conversation)])
        XCTAssertEqual(again.status, 200, again.text)
        let afterAgain = try await files(parley)
        XCTAssertEqual(afterAgain.count, 1, "deduplicated by the upload's hash")
        let sentAgain = (upstream.requests.last?.jsonBody?["messages"] as? [[String: Any]])?.last?["content"]
        let partsAgain = sentAgain as? [[String: Any]] ?? []
        XCTAssertEqual(partsAgain.first?["text"] as? String, "again:", "no blank line for a message of only an image")
        XCTAssertEqual((partsAgain.last?["image_url"] as? [String: Any])?["url"] as? String, dataURL("image/png", bytes))
    }

    func testFilePartsAreStoredAndSentAsDocumentTextHistoryIncluded() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream)
        let notes = "# Notes\nThe meeting is on Tuesday."
        let pdf = Self.pdf("Quarterly report")
        upstream.enqueue(UpstreamStreams.complete(["Tuesday, and a report."]))
        let reply = try await completion(parley, [
            "model": "openai:fake",
            "messages": [
                ["role": "user", "content": [filePart(dataURL("text/markdown", Array(notes.utf8)), "notes.md"),
                                             ["type": "text", "text": "read this"]]],
                ["role": "assistant", "content": "Read."],
                ["role": "user", "content": [["type": "text", "text": "and this"],
                                             filePart(Data(pdf).base64EncodedString(), "report.pdf")]],
            ],
        ])
        XCTAssertEqual(reply.status, 200, reply.text)
        let stored = try await files(parley)
        XCTAssertEqual(Set(stored.compactMap { $0["media_type"] as? String }), ["text/markdown", "application/pdf"])
        let messages = upstream.requests.last?.jsonBody?["messages"] as? [[String: Any]] ?? []
        XCTAssertEqual(messages.count, 3, "\(messages)")
        XCTAssertEqual(messages.first?["content"] as? String,
                       "<document name=\"notes.md\" type=\"text/markdown\">\n\(notes)\n</document>\n\nread this",
                       "a file of an earlier turn is stored with that turn and sent with it")
        let last = messages.last?["content"] as? String ?? ""
        XCTAssertTrue(last.hasPrefix("<document name=\"report.pdf\" type=\"application/pdf\">\n"), last)
        XCTAssertTrue(last.contains("Quarterly report"), "the PDF's extracted text: \(last)")
        XCTAssertTrue(last.hasSuffix("\n</document>\n\nand this"), last)
    }

    func testAFileIDMustBeTheCallersOwn() async throws {
        let parley = try startTeamParley()
        let owner = try Team.bearer(parley, "owner")
        let other = try Team.bearer(parley, "other")
        let upload = try await Blocking.run { [base = parley.base] in
            try TestHTTPClient().request("POST", base + "/api/files?filename=plan.txt",
                                         headers: [("Content-Type", "text/plain"), owner], body: Array("the plan".utf8),
                                         timeout: 30)
        }
        XCTAssertEqual(upload.status, 201, upload.text)
        let id = try XCTUnwrap((ExactJSON.parse(upload.text)?.foundation as? [String: Any])?["id"] as? String)
        let body: (String) -> [String: Any] = { id in
            ["model": "demo", "messages": [["role": "user", "content": [
                ["type": "text", "text": "what is the plan?"], ["type": "file", "file": ["file_id": id]]]]]]
        }
        for (fileID, auth) in [(id, other), ("does-not-exist", owner)] {
            let refused = try await completion(parley, body(fileID), headers: [auth])
            XCTAssertEqual(refused.status, 404, refused.text)
            XCTAssertEqual(error(refused)["type"] as? String, "invalid_request_error")
            XCTAssertEqual(error(refused)["code"] as? String, "not_found")
        }
        let othersConversations = try await parley.call("GET", "/api/conversations", as: other)
        XCTAssertTrue(othersConversations.items.isEmpty, "nothing stored for a refused call")
        let mine = try await completion(parley, body(id), headers: [owner])
        XCTAssertEqual(mine.status, 200, mine.text)
        let text = ((mine.json["choices"] as? [[String: Any]])?.first?["message"] as? [String: Any])?["content"] as? String
        XCTAssertTrue(text?.contains("plan.txt") ?? false, "the demo model read the document: \(text ?? "")")
    }

    func testBadPartsAreRefusedInOpenAIsShapeWithNothingStoredOrSent() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream, ["PARLEY_MAX_ATTACHMENTS": "2", "PARLEY_MAX_FILE_BYTES": "4000"])
        let vision = try await models(parley)
        XCTAssertEqual(vision["openai:fake"], false)
        let png = TestPNG.make(width: 8, height: 8)
        let text = dataURL("text/plain", Array("hello".utf8))
        let zip: [UInt8] = [0x50, 0x4B, 0x03, 0x04] + Array(repeating: 0, count: 40)
        func user(_ parts: [[String: Any]], model: String = "demo") -> [String: Any] {
            ["model": model, "messages": [["role": "user", "content": parts]]]
        }
        let cases: [([String: Any], Int, String)] = [
            (user([imagePart("https://example.com/cat.png")]), 400, "remote_url_not_allowed"),
            (user([imagePart("http://169.254.169.254/latest/meta-data")]), 400, "remote_url_not_allowed"),
            (user([filePart("file:///etc/passwd", "passwd")]), 400, "remote_url_not_allowed"),
            (user([imagePart("data:image/png;base64,@@not base64@@")]), 400, "invalid_base64"),
            (user([filePart("bm90IGJhc2U2NA=!", "x.txt")]), 400, "invalid_base64"),
            (user([imagePart("data:image/png," + "plain")]), 400, "invalid_data_url"),
            (user([imagePart("cat.png")]), 400, "invalid_data_url"),
            (user([imagePart(text)]), 400, "invalid_image"),
            (user([filePart(dataURL("application/zip", zip), "a.zip")]), 415, "unsupported_file"),
            (user([filePart(dataURL("text/plain", []), "empty.txt")]), 400, "empty_file"),
            (user([filePart(dataURL("text/plain", Array(repeating: 65, count: 4001)), "big.txt")]), 413, "file_too_large"),
            (user([filePart(text, "a.txt"), filePart(text, "b.txt"), filePart(text, "c.txt")]), 400, "too_many_attachments"),
            (user([["type": "file", "file": ["filename": "x.txt"]]]), 400, "invalid_request"),
            (user([["type": "input_audio", "input_audio": ["data": "", "format": "wav"]]]), 400, "invalid_request"),
            (user([imagePart(dataURL("image/png", png))], model: "openai:fake"), 400, "model_cannot_see_images"),
            (["model": "demo", "messages": [["role": "user", "content": "hi"],
                                            ["role": "assistant", "content": [imagePart(dataURL("image/png", png))]],
                                            ["role": "user", "content": "again"]]], 400, "invalid_request"),
        ]
        for (body, status, code) in cases {
            let reply = try await completion(parley, body)
            XCTAssertEqual(reply.status, status, "\(code): \(reply.text)")
            XCTAssertEqual(error(reply)["code"] as? String, code, reply.text)
            XCTAssertEqual(error(reply)["type"] as? String, "invalid_request_error", reply.text)
            XCTAssertFalse((error(reply)["message"] as? String ?? "").isEmpty)
        }
        // Refused by the media worker after a good file of the same call was stored: that one goes too.
        // (PNG's signature, then no PNG: it passes the first look, and libvips cannot read it.)
        let notPNG = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("this is no image at all".utf8)
        let broken = try await completion(parley, user([filePart(text, "kept.txt"), imagePart(dataURL("image/png", notPNG))]))
        XCTAssertEqual(broken.status, 400, broken.text)
        XCTAssertEqual(error(broken)["code"] as? String, "invalid_file", broken.text)
        XCTAssertEqual(error(broken)["type"] as? String, "invalid_request_error", broken.text)
        XCTAssertEqual(upstream.requests.count, 0, "nothing was sent")
        let stored = try await files(parley)
        XCTAssertTrue(stored.isEmpty, "nothing was stored: \(stored)")
        let list = try await parley.call("GET", "/api/conversations")
        XCTAssertTrue(list.items.isEmpty, "no refused call left a conversation: \(list.text)")
    }

    func testTheEndpointHasItsOwnBodyLimit() async throws {
        // Default: a file of PARLEY_MAX_FILE_BYTES as base64 on top of PARLEY_MAX_BODY_BYTES.
        let parley = try startParley(["PARLEY_MAX_BODY_BYTES": "65536", "PARLEY_MAX_FILE_BYTES": "150000"])
        XCTAssertEqual(parley.app.configuration.openAIBodyLimit, 200_000 + 65536)
        let vision = try await models(parley)
        XCTAssertEqual(vision["demo"], true, "the demo model always sees")
        let text = String(repeating: "All work and no play. ", count: 6000)  // 132,000 bytes, 176,000 as base64
        let inline: [String: Any] = ["model": "demo", "messages": [["role": "user", "content": [
            ["type": "text", "text": "how long?"], filePart(dataURL("text/plain", Array(text.utf8)), "long.txt")]]]]
        let reply = try await completion(parley, inline)
        XCTAssertEqual(reply.status, 200, reply.text)
        let elsewhere = try await parley.call("POST", "/api/conversations", json: ["title": String(repeating: "x", count: 70_000)])
        XCTAssertEqual(elsewhere.status, 413, "the rest of the API keeps PARLEY_MAX_BODY_BYTES")
        let over = try await completion(parley, ["model": "demo", "messages": [["role": "user", "content": [
            filePart(dataURL("text/plain", Array(repeating: 65, count: 200_000)), "huge.txt")]]]])
        XCTAssertEqual(over.status, 413, over.text)

        let chosen = try startParley(["PARLEY_OPENAI_MAX_BODY_BYTES": "1000"])
        XCTAssertEqual(chosen.app.configuration.openAIBodyLimit, 1000)
        let small = try await completion(chosen, ["model": "demo", "messages": [["role": "user", "content":
            String(repeating: "y", count: 2000)]]])
        XCTAssertEqual(small.status, 413, small.text)
    }

    /// A one-page PDF showing `text` in Helvetica, written as PDF text with a correct cross-reference
    /// table (as Tests/ParleyMediaTests/PDFFixtures does).
    private static func pdf(_ text: String) -> [UInt8] {
        let content = "BT /F1 24 Tf 72 720 Td (\(text)) Tj ET"
        let objects = ["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
                       "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
                       "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>",
                       "<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream"]
        var pdf = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (index, body) in objects.enumerated() {
            offsets.append(pdf.utf8.count)
            pdf += "\(index + 1) 0 obj\n\(body)\nendobj\n"
        }
        let xref = pdf.utf8.count
        pdf += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { pdf += String(format: "%010d 00000 n \n", offset) }
        pdf += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return Array(pdf.utf8)
    }
}
