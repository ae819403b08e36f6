import Foundation
import ParleyTestSupport
import XCTest

/// Attachments through export and import (issue 21): embedded as base64 and back byte for byte,
/// `?attachments=omit`, the export and import limits, a corrupt file refusing the whole import, and
/// another user's file id never attached.
final class ExportImportFilesTests: XCTestCase {
    private let note = Array("A short note.\nSecond line: café.\n".utf8)

    /// Uploads `bytes` raw (the route takes any non-multipart body as the file) and returns the file's id.
    private func upload(_ parley: TestParley, _ bytes: [UInt8], _ filename: String,
                        headers: [(String, String)] = []) async throws -> String {
        let reply = try await parley.call("POST", "/api/files?filename=\(filename)", body: bytes, headers: headers)
        XCTAssertEqual(reply.status, 201, reply.text)
        return try XCTUnwrap(reply.json["id"] as? String)
    }

    /// A conversation whose one user message shows an image and a document; returns its id and the files'.
    private func conversationWithFiles(_ parley: TestParley, headers: [(String, String)] = []) async throws
        -> (conversation: String, files: [String]) {
        let image = try await upload(parley, TinyPNG.make(), "dot.png", headers: headers)
        let text = try await upload(parley, note, "note.txt", headers: headers)
        let created = try await parley.call("POST", "/api/conversations", json: ["title": "Files", "model": "demo"],
                                            headers: headers)
        let id = try XCTUnwrap(created.json["id"] as? String)
        let sent = try await parley.call("POST", "/api/conversations/\(id)/messages",
                                         json: ["content": "look", "attachments": [image, text]], headers: headers)
        XCTAssertEqual(sent.status / 100, 2, sent.text)
        _ = try await parley.finished(try XCTUnwrap(sent.assistantID), headers: headers)
        return (id, [image, text])
    }

    /// The stored bytes of a file, as GET /api/files/{id} serves them.
    private func content(_ parley: TestParley, _ id: String, headers: [(String, String)] = []) async throws -> [UInt8] {
        let url = parley.base + "/api/files/\(id)"
        let response = try await Blocking.run { try TestHTTPClient().request("GET", url, headers: headers, body: nil, timeout: 30) }
        XCTAssertEqual(response.status, 200)
        return response.body
    }

    private func importDocument(_ parley: TestParley, _ text: String, headers: [(String, String)] = []) async throws
        -> TestParley.Reply {
        try await parley.call("POST", "/api/import", body: Array(text.utf8), headers: headers)
    }

    func testARoundTripKeepsEveryByteOfImagesAndDocuments() async throws {
        let parley = try TestParley()
        let (id, files) = try await conversationWithFiles(parley)
        let original = [try await content(parley, files[0]), try await content(parley, files[1])]
        let exported = try await parley.call("GET", "/api/conversations/\(id)/export")
        XCTAssertEqual(exported.status, 200)
        let entries = try XCTUnwrap(exported.json["files"] as? [[String: Any]])
        XCTAssertEqual(entries.map { $0["id"] as? String }, files)
        XCTAssertEqual(entries.map { $0["kind"] as? String }, ["image", "document"])
        XCTAssertEqual(entries.compactMap { ($0["data"] as? String).flatMap { Data(base64Encoded: $0) } }.map(Array.init),
                       original)
        let user = try XCTUnwrap((exported.json["messages"] as? [[String: Any]])?.first { $0["role"] as? String == "user" })
        XCTAssertEqual(user["files"] as? [String], files)

        let other = try TestParley()
        let imported = try await importDocument(other, exported.text)
        XCTAssertEqual(imported.status, 201, imported.text)
        let newID = try XCTUnwrap((imported.json["items"] as? [[String: Any]])?.first?["id"] as? String)
        let again = try await other.call("GET", "/api/conversations/\(newID)/export")
        let newEntries = try XCTUnwrap(again.json["files"] as? [[String: Any]])
        XCTAssertEqual(newEntries.count, 2)
        for (index, entry) in newEntries.enumerated() {
            let fileID = try XCTUnwrap(entry["id"] as? String)
            let bytes = try await content(other, fileID)
            XCTAssertEqual(bytes, original[index], "file \(index)")
        }
        let listed = try await parley.call("GET", "/api/files")
        let listedAgain = try await other.call("GET", "/api/files")
        let digests = { (reply: TestParley.Reply) in
            Set(((reply.json["items"] as? [[String: Any]]) ?? []).compactMap { $0["sha256"] as? String })
        }
        XCTAssertEqual(digests(listed), digests(listedAgain))
        XCTAssertEqual(digests(listed).count, 2)
        await parley.stop()
        await other.stop()
    }

    func testTheExportOfEverythingCarriesEachConversationsFiles() async throws {
        let parley = try TestParley()
        _ = try await conversationWithFiles(parley)
        _ = try await parley.call("POST", "/api/conversations", json: ["title": "No files", "model": "demo"])
        let exported = try await parley.call("GET", "/api/export")
        XCTAssertEqual(exported.status, 200)
        let conversations = try XCTUnwrap(exported.json["conversations"] as? [[String: Any]])
        XCTAssertEqual(conversations.map { ($0["files"] as? [Any])?.count }, [2, 0])
        let other = try TestParley()
        let imported = try await importDocument(other, exported.text)
        XCTAssertEqual(imported.status, 201, imported.text)
        let again = try await other.call("GET", "/api/export")
        let files = try XCTUnwrap((again.json["conversations"] as? [[String: Any]])?.first?["files"] as? [[String: Any]])
        XCTAssertEqual(files.compactMap { $0["data"] as? String },
                       (conversations[0]["files"] as? [[String: Any]])?.compactMap { $0["data"] as? String })
        await parley.stop()
        await other.stop()
    }

    func testOmitWritesEntriesWithoutData() async throws {
        let parley = try TestParley()
        let (id, files) = try await conversationWithFiles(parley)
        for path in ["/api/conversations/\(id)/export?attachments=omit", "/api/export?attachments=omit"] {
            let exported = try await parley.call("GET", path)
            XCTAssertEqual(exported.status, 200)
            XCTAssertFalse(exported.text.contains("\"data\""), path)
            XCTAssertTrue(files.allSatisfy { exported.text.contains($0) }, path)
        }
        // The same owner imports it: the files they own are attached again.
        let exported = try await parley.call("GET", "/api/conversations/\(id)/export?attachments=omit")
        let imported = try await importDocument(parley, exported.text)
        XCTAssertEqual(imported.status, 201, imported.text)
        await parley.stop()
    }

    func testAnExportPastTheLimitIs413NamingOmit() async throws {
        let parley = try TestParley(["PARLEY_EXPORT_MAX_ATTACHMENT_BYTES": "10"])
        let (id, _) = try await conversationWithFiles(parley)
        for path in ["/api/conversations/\(id)/export", "/api/export"] {
            let refused = try await parley.call("GET", path)
            XCTAssertEqual(refused.status, 413, path)
            XCTAssertTrue(refused.text.contains("?attachments=omit"), refused.text)
        }
        let omitted = try await parley.call("GET", "/api/export?attachments=omit")
        XCTAssertEqual(omitted.status, 200)
        await parley.stop()
    }

    func testACorruptFileRefusesTheWholeImport() async throws {
        let parley = try TestParley()
        let (id, _) = try await conversationWithFiles(parley)
        let exported = try await parley.call("GET", "/api/conversations/\(id)/export")
        let truncated = Data(TinyPNG.make().prefix(40)).base64EncodedString()
        let good = try XCTUnwrap((exported.json["files"] as? [[String: Any]])?.first?["data"] as? String)
        let corrupt = exported.text.replacingOccurrences(of: good, with: truncated)
        let other = try TestParley()
        let refused = try await importDocument(other, corrupt)
        XCTAssertEqual(refused.status / 100, 4, refused.text)
        XCTAssertTrue(refused.text.contains("files[0]"), refused.text)
        let conversations = try await other.call("GET", "/api/conversations")
        XCTAssertEqual((conversations.json["items"] as? [Any])?.count, 0)
        let stored = try await other.call("GET", "/api/files")
        XCTAssertEqual((stored.json["items"] as? [Any])?.count, 0, stored.text)
        await parley.stop()
        await other.stop()
    }

    func testAnImportOverItsLimitIs413() async throws {
        let parley = try TestParley(["PARLEY_MAX_IMPORT_BYTES": "100"])
        let refused = try await importDocument(parley, String(repeating: " ", count: 200) + "{}")
        XCTAssertEqual(refused.status, 413, refused.text)
        let plain = try await parley.call("POST", "/api/import", body: Array("{}".utf8), headers: [])
        XCTAssertEqual(plain.status, 400, plain.text)
        await parley.stop()
    }

    func testAnotherUsersFileIdInAnOmitExportIsNotAttached() async throws {
        let team = try startTeam()
        let parley = team.parley
        let ann = try Team.bearer(parley, "ann")
        let bob = try Team.bearer(parley, "bob")
        let (id, _) = try await conversationWithFiles(parley, headers: [ann])
        let exported = try await parley.call("GET", "/api/conversations/\(id)/export?attachments=omit", headers: [ann])
        XCTAssertEqual(exported.status, 200)
        let refused = try await importDocument(parley, exported.text, headers: [bob])
        XCTAssertEqual(refused.status, 400, refused.text)
        XCTAssertTrue(refused.text.contains("messages[0].files[0]"), refused.text)
        let listed = try await parley.call("GET", "/api/conversations", headers: [bob])
        XCTAssertEqual((listed.json["items"] as? [Any])?.count, 0)
    }
}
