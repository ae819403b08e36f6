import Foundation
import ParleyHTTP
import ParleyTestSupport
import XCTest

/// Upload routes deliver a file's exact bytes from multipart (libmicrohttpd's post processor) and raw
/// bodies, with the client's name and type untouched, and refuse bodies without exactly one file.
final class UploadTests: XCTestCase {
    private let recorder = UploadRecorder()

    private func start(maxBytes: Int = 8 << 20, admit: @escaping UploadRoute.Admit = { _ in nil })
        throws -> (base: String, folder: String) {
        let folder = makeUploadFolder(self)
        let (_, base) = try startUploadServer(self, folder: folder, maxBytes: maxBytes, recorder: recorder, admit: admit)
        return (base, folder)
    }

    private func post(_ base: String, _ body: [UInt8], contentType: String, path: String = "/api/upload")
        throws -> TestHTTPClient.Response {
        try TestHTTPClient().request("POST", base + path, headers: [("Content-Type", contentType)], body: body)
    }

    func testMultipartWithCurlFramingDeliversTheExactBytes() throws {
        let (base, folder) = try start()
        var generator = SplitMix64.forTest("multipart")
        let content = randomBytes(3 << 20 + 123, &generator)
        let form = Multipart()
        let body = form.body([
            Multipart.Part(name: "purpose", bytes: Array("chat".utf8)),
            Multipart.Part(name: "file", filename: "photo.png", contentType: "image/png", bytes: content),
            Multipart.Part(name: "after", bytes: Array("ignored".utf8)),
        ])
        let response = try post(base, body, contentType: form.contentType)
        XCTAssertEqual(response.status, 201, response.text)
        XCTAssertEqual(response.text, "\(content.count)")
        let call = try XCTUnwrap(recorder.last)
        XCTAssertTrue(call.bytes == content, "byte-identical (\(call.bytes.count) of \(content.count) bytes)")
        XCTAssertEqual(call.body.byteCount, content.count)
        XCTAssertEqual(call.body.filename, "photo.png")
        XCTAssertEqual(call.body.contentType, "image/png")
        XCTAssertTrue(uploadFiles(in: folder).isEmpty, "the temp file is deleted once the handler returned")
    }

    func testBoundaryLikeBytesAndLineBreaksInTheFileArePreserved() throws {
        let (base, _) = try start()
        let form = Multipart()
        var generator = SplitMix64.forTest("boundary-like")
        var content: [UInt8] = Array("\r\n--".utf8)
        // Near misses of the delimiter (CRLF, "--", the boundary), which a client never lets occur whole;
        // `#` on each side keeps the random bytes around from completing one.
        for trap in ["\r\n--\(form.boundary.dropLast())", "\r\n--\(form.boundary.dropFirst())",
                     "\r\n-\(form.boundary)", "\n--\(form.boundary)", "--\(form.boundary)\r\n",
                     "\r\n\r\n", "\r", "\n--", "\r\n-", "\(form.boundary)--"] {
            content += Array("#\(trap)#".utf8) + randomBytes(Int(generator.next() % 70_000), &generator)
        }
        content += Array("\r\n--\r\n".utf8)
        let response = try post(base, form.file(content), contentType: form.contentType)
        XCTAssertEqual(response.status, 201, response.text)
        XCTAssertTrue(recorder.last?.bytes == content, "the boundary-like runs are part of the file")
    }

    func testARawBodyIsTheFileNamedByTheQuery() throws {
        let (base, _) = try start()
        let content = Array("plain text, not multipart\r\n--x\r\n".utf8)
        let response = try post(base, content, contentType: "text/plain; charset=utf-8",
                                path: "/api/upload?filename=notes%20v2.txt")
        XCTAssertEqual(response.status, 201, response.text)
        let call = try XCTUnwrap(recorder.last)
        XCTAssertEqual(call.bytes, content)
        XCTAssertEqual(call.body.filename, "notes v2.txt")
        XCTAssertEqual(call.body.contentType, "text/plain; charset=utf-8")
        XCTAssertTrue(call.fileExisted)
    }

    /// Sanitising a name is the files module's job (it stores and serves it); the HTTP layer hands it
    /// over exactly as sent.
    func testFilenamesArePassedThroughRaw() throws {
        let (base, _) = try start()
        let hostile = "../../etc/pa\u{1}ss\twd\u{7f}.txt"
        let form = Multipart()
        XCTAssertEqual(try post(base, form.file([1, 2, 3], filename: hostile), contentType: form.contentType).status, 201)
        XCTAssertEqual(recorder.last?.body.filename, hostile)

        let response = try post(base, [4], contentType: "application/octet-stream",
                                path: "/api/upload?filename=..%2F..%2Fx%0D%0Ay%00z")
        XCTAssertEqual(response.status, 201, response.text)
        XCTAssertEqual(recorder.last?.body.filename, "../../x\r\ny\u{0}z")
        XCTAssertNil(recorder.all.first { $0.body.filename == nil })
    }

    func testARawBodyWithoutFilenameHasNone() throws {
        let (base, _) = try start()
        XCTAssertEqual(try post(base, [9, 9], contentType: "image/png").status, 201)
        XCTAssertNil(recorder.last?.body.filename)
        XCTAssertEqual(recorder.last?.body.byteCount, 2)
    }

    func testAnEmptyFileIsAZeroByteFile() throws {
        let (base, _) = try start()
        let form = Multipart()
        let response = try post(base, form.file([], filename: "empty.txt"), contentType: form.contentType)
        XCTAssertEqual(response.status, 201, response.text)
        XCTAssertEqual(recorder.last?.body.byteCount, 0)
        XCTAssertEqual(recorder.last?.body.filename, "empty.txt")
        XCTAssertEqual(recorder.last?.fileExisted, true)
    }

    func testMultipartWithoutAFileFieldIs400() throws {
        let (base, folder) = try start()
        let form = Multipart()
        let body = form.body([Multipart.Part(name: "document", filename: "a.txt", bytes: Array("x".utf8))])
        let response = try post(base, body, contentType: form.contentType)
        XCTAssertEqual(response.status, 400)
        XCTAssertTrue(response.text.contains(#""code":"missing_file""#), response.text)
        XCTAssertTrue(recorder.all.isEmpty)
        XCTAssertTrue(eventually { uploadFiles(in: folder).isEmpty })
    }

    func testASecondFileFieldIs400() throws {
        let (base, folder) = try start()
        let form = Multipart()
        let body = form.body([
            Multipart.Part(name: "file", filename: "a.txt", bytes: Array("first".utf8)),
            Multipart.Part(name: "file", filename: "b.txt", bytes: Array("second".utf8)),
        ])
        let response = try post(base, body, contentType: form.contentType)
        XCTAssertEqual(response.status, 400)
        XCTAssertTrue(response.text.contains(#""code":"multiple_files""#), response.text)
        XCTAssertTrue(recorder.all.isEmpty)
        XCTAssertTrue(eventually { uploadFiles(in: folder).isEmpty })
    }

    func testBrokenMultipartIs400() throws {
        let (base, _) = try start()
        let form = Multipart()
        let truncated = Array(form.file(Array("abc".utf8)).dropLast(form.tail.count))
        let response = try post(base, truncated, contentType: form.contentType)
        XCTAssertEqual(response.status, 400, "no closing boundary")
        XCTAssertTrue(response.text.contains(#""code":"invalid_multipart""#), response.text)
        let noBoundary = try post(base, form.file([1]), contentType: "multipart/form-data")
        XCTAssertEqual(noBoundary.status, 400)
        XCTAssertTrue(noBoundary.text.contains(#""code":"invalid_multipart""#), noBoundary.text)
        XCTAssertTrue(recorder.all.isEmpty)
    }

    /// `admit` answers at headers time: the client that only sent headers for a 100 MB body gets it.
    func testAdmitRefusesBeforeAnyBodyByte() throws {
        let (base, folder) = try start(admit: { request in
            request.header("authorization") == "Bearer ok"
                ? nil : HTTPError(status: 401, code: "unauthorized", message: "Sign in.")
        })
        guard let port = URL(string: base)?.port else { return XCTFail("no port in \(base)") }
        let connection = try RawConnection(port: port)
        connection.send(uploadHead(contentType: "application/octet-stream", length: 100 << 20))
        let answer = connection.readResponse(timeout: 5)
        XCTAssertTrue(answer.text.hasPrefix("HTTP/1.1 401"), answer.text)
        XCTAssertTrue(answer.text.contains(#""code":"unauthorized""#), answer.text)
        XCTAssertTrue(uploadFiles(in: folder).isEmpty, "no file was made for a refused upload")

        let admitted = try TestHTTPClient().request(
            "POST", base + "/api/upload", headers: [("Authorization", "Bearer ok"), ("Content-Type", "text/plain")],
            body: [1])
        XCTAssertEqual(admitted.status, 201)
    }

    func testAHandlerThatThrowsIsAnsweredAndItsFileStillDeleted() throws {
        let folder = makeUploadFolder(self)
        let (_, base) = try startServer(self, configure: { $0.uploadDirectory = folder }, routes: { router in
            router.on("PUT", "/api/things/:id/file", upload: UploadRoute(maxBytes: 100) { request, body in
                let id = try request.parameter("id")
                throw HTTPError(status: 415, code: "unsupported_file", message: "\(id): \(body.byteCount) bytes")
            })
        })
        let response = try TestHTTPClient().request(
            "PUT", base + "/api/things/7/file", headers: [("Content-Type", "text/plain")], body: [1, 2, 3])
        XCTAssertEqual(response.status, 415)
        XCTAssertTrue(response.text.contains("7: 3 bytes"), response.text)
        XCTAssertTrue(uploadFiles(in: folder).isEmpty)
    }

    /// Without a configured folder the server makes a private one and removes it at shutdown.
    func testWithoutAFolderAPrivateOneIsUsedAndRemovedAtShutdown() throws {
        let (server, base) = try startServer(self, routes: { router in
            router.on("POST", "/api/upload", upload: UploadRoute(maxBytes: 100) { [recorder] request, body in
                recorder.record(request, body)
                return .noContent()
            })
        })
        XCTAssertEqual(try post(base, [1], contentType: "text/plain").status, 204)
        let folder = try XCTUnwrap(recorder.last?.body.file.deletingLastPathComponent().path)
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder))
        server.shutdown()
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder))
    }

    /// The small-JSON path is untouched by the upload route beside it.
    func testInMemoryRoutesKeepWorkingBesideAnUploadRoute() throws {
        let (base, _) = try start()
        let client = TestHTTPClient()
        for round in 0..<3 {
            let body = Array("{\"round\":\(round)}".utf8)
            let response = try client.request("POST", base + "/api/echo", headers: [("Content-Type", "application/json")],
                                              body: body)
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.body, body)
        }
        XCTAssertEqual(try client.request("POST", base + "/api/echo", body: [UInt8](repeating: 1, count: 2 << 20)).status,
                       413, "the in-memory body limit still applies")
        XCTAssertEqual(try client.request("GET", base + "/api/upload").status, 405)
    }
}
