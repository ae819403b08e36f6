import Foundation
import ParleyHTTP
import ParleyTestSupport
import XCTest

/// An upload's limits: the declared length refused before the body, overflow found mid-body answered
/// after it (or the connection closed past the discard limit), the concurrency cap, temp files that
/// never outlive their request, and memory that does not grow with the body.
final class UploadLimitTests: XCTestCase {
    private let recorder = UploadRecorder(keepBytes: false)

    private func start(maxBytes: Int, configure: (inout HTTPServerConfiguration) -> Void = { _ in })
        throws -> (port: Int, base: String, folder: String) {
        let folder = makeUploadFolder(self)
        let (server, base) = try startUploadServer(
            self, folder: folder, maxBytes: maxBytes, recorder: recorder, configure: configure)
        return (server.port, base, folder)
    }

    func testADeclaredLengthOverTheLimitIs413BeforeTheBody() throws {
        let (port, _, folder) = try start(maxBytes: 1 << 20)
        for (type, length) in [("application/pdf", (1 << 20) + 1),
                               ("multipart/form-data; boundary=x", (1 << 20) + UploadRoute.multipartAllowance + 1)] {
            let connection = try RawConnection(port: port)
            connection.send(uploadHead(contentType: type, length: length))  // only the headers
            let answer = connection.readResponse(timeout: 5)
            XCTAssertTrue(answer.text.hasPrefix("HTTP/1.1 413"), "\(type): \(answer.text)")
            XCTAssertTrue(answer.text.contains(#""code":"payload_too_large""#), answer.text)
            XCTAssertTrue(connection.readUntilClosed(timeout: 5).closed, "the refusal closes the connection")
        }
        XCTAssertTrue(uploadFiles(in: folder).isEmpty)
        XCTAssertTrue(recorder.all.isEmpty)
    }

    func testAFileExactlyAtTheLimitIsAcceptedAndOneByteMoreIs413AfterTheBody() throws {
        let (_, base, folder) = try start(maxBytes: 100_000)
        let form = Multipart()
        let client = TestHTTPClient()
        let exact = try client.request("POST", base + "/api/upload", headers: [("Content-Type", form.contentType)],
                                       body: form.file([UInt8](repeating: 7, count: 100_000)))
        XCTAssertEqual(exact.status, 201, exact.text)
        // Within the framing allowance, so only the post processor sees the file is too large.
        let over = try client.request("POST", base + "/api/upload", headers: [("Content-Type", form.contentType)],
                                      body: form.file([UInt8](repeating: 7, count: 100_001)))
        XCTAssertEqual(over.status, 413, over.text)
        XCTAssertTrue(over.text.contains(#""code":"payload_too_large""#))
        XCTAssertEqual(recorder.all.count, 1)
        XCTAssertTrue(eventually { uploadFiles(in: folder).isEmpty })
    }

    func testAChunkedBodyPastTheLimitIs413AfterIt() throws {
        let (_, base, folder) = try start(maxBytes: 64 * 1024, configure: { $0.maxDiscardBytes = 1 << 20 })
        for (type, body) in [("application/octet-stream", [UInt8](repeating: 1, count: 300_000)),
                             (Multipart().contentType, Multipart().file([UInt8](repeating: 1, count: 300_000)))] {
            let response = try TestHTTPClient().request(
                "POST", base + "/api/upload", headers: [("Content-Type", type), ("Transfer-Encoding", "chunked")],
                body: body)
            XCTAssertEqual(response.status, 413, "\(type): \(response.text)")
            XCTAssertTrue(response.text.contains(#""code":"payload_too_large""#))
        }
        XCTAssertTrue(recorder.all.isEmpty)
        XCTAssertTrue(eventually { uploadFiles(in: folder).isEmpty })
    }

    func testAChunkedBodyPastTheDiscardLimitClosesTheConnection() throws {
        let (_, base, folder) = try start(maxBytes: 64 * 1024, configure: { $0.maxDiscardBytes = 256 * 1024 })
        let outcome = Result {
            try TestHTTPClient().request(
                "POST", base + "/api/upload",
                headers: [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", "chunked")],
                body: [UInt8](repeating: 1, count: 4 << 20))
        }
        if case .success(let response) = outcome { XCTFail("expected a closed connection, got \(response.status)") }
        XCTAssertTrue(eventually { uploadFiles(in: folder).isEmpty })
        let after = try TestHTTPClient().request(
            "POST", base + "/api/upload", headers: [("Content-Type", "text/plain")], body: [1, 2])
        XCTAssertEqual(after.status, 201, "the server keeps serving")
    }

    func testMoreConcurrentUploadsThanAllowedGet503() throws {
        let (port, base, folder) = try start(maxBytes: 1 << 20, configure: { $0.maxConcurrentUploads = 2 })
        var holders: [RawConnection] = []
        for _ in 0..<2 {
            let connection = try RawConnection(port: port)
            connection.send(uploadHead(contentType: "application/octet-stream", length: 500_000))
            connection.send([UInt8](repeating: 3, count: 1000))
            holders.append(connection)
        }
        XCTAssertTrue(eventually { uploadFiles(in: folder).count == 2 }, "both uploads are being received")
        let refused = try TestHTTPClient().request(
            "POST", base + "/api/upload", headers: [("Content-Type", "text/plain")], body: [1])
        XCTAssertEqual(refused.status, 503)
        XCTAssertTrue(refused.text.contains(#""code":"busy""#), refused.text)
        XCTAssertEqual(refused.header("retry-after"), "1")
        XCTAssertEqual(try TestHTTPClient().request("POST", base + "/api/echo", body: [1]).status, 200,
                       "other routes are not counted")

        holders[0].close()
        XCTAssertTrue(eventually { uploadFiles(in: folder).count == 1 }, "a client that left gives its slot back")
        let admitted = try TestHTTPClient().request(
            "POST", base + "/api/upload", headers: [("Content-Type", "text/plain")], body: [1])
        XCTAssertEqual(admitted.status, 201)
        holders[1].close()
        XCTAssertTrue(eventually { uploadFiles(in: folder).isEmpty })
    }

    func testTheTempFileExistsForTheHandlerAndIsGoneAfterTheAnswer() throws {
        let (_, base, folder) = try start(maxBytes: 1 << 20)
        let response = try TestHTTPClient().request(
            "POST", base + "/api/upload?filename=a.bin", headers: [("Content-Type", "application/octet-stream")],
            body: [UInt8](repeating: 5, count: 50_000))
        XCTAssertEqual(response.status, 201)
        let call = try XCTUnwrap(recorder.last)
        XCTAssertTrue(call.fileExisted)
        XCTAssertEqual(call.body.file.deletingLastPathComponent().standardizedFileURL.path,
                       URL(fileURLWithPath: folder).standardizedFileURL.path)
        XCTAssertFalse(FileManager.default.fileExists(atPath: call.body.file.path), "deleted before the answer left")
        XCTAssertTrue(uploadFiles(in: folder).isEmpty)
    }

    func testTheTempFileIsGoneWhenTheClientLeavesMidBody() throws {
        let (port, _, folder) = try start(maxBytes: 1 << 20)
        for type in ["application/octet-stream", Multipart().contentType] {
            let connection = try RawConnection(port: port)
            connection.send(uploadHead(contentType: type, length: 400_000))
            connection.send([UInt8](repeating: 3, count: 100_000))
            XCTAssertTrue(eventually { uploadFiles(in: folder).count == 1 }, type)
            connection.close()
            XCTAssertTrue(eventually { uploadFiles(in: folder).isEmpty }, "\(type): deleted when the client left")
        }
        XCTAssertTrue(recorder.all.isEmpty)
    }

    func testTheUploadDirectoryIsCreatedAndClearedOfOldUploadsAtStart() throws {
        let folder = makeUploadFolder(self) + "/nested/uploads"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.createFile(atPath: folder + "/parley-upload-stale", contents: Data([1])))
        XCTAssertTrue(FileManager.default.createFile(atPath: folder + "/keep.txt", contents: Data([2])))
        _ = try startUploadServer(self, folder: folder, maxBytes: 10, recorder: recorder)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), ["keep.txt"],
                       "only Parley's own temp files are removed")

        let fresh = makeUploadFolder(self) + "/made/at/start"
        _ = try startUploadServer(self, folder: fresh, maxBytes: 10, recorder: recorder)
        var isFolder: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: fresh, isDirectory: &isFolder) && isFolder.boolValue)
    }

    /// A 20 MB upload sent in pieces from a generator (so the client holds no copy): the server's RSS
    /// (the server runs in this process) must rise by far less than the body. An in-memory body would
    /// add at least its 20 MiB; the probe itself is checked to see such a rise.
    func testResidentMemoryDoesNotGrowWithA20MBUpload() throws {
        let size = 20 << 20
        let (port, _, folder) = try start(maxBytes: size)
        let form = Multipart()
        let head = form.head(Multipart.Part(name: "file", filename: "big.bin", contentType: "application/octet-stream",
                                            bytes: []))
        let connection = try RawConnection(port: port)
        connection.send(uploadHead(contentType: form.contentType, length: head.count + size + form.tail.count))

        let baseline = residentBytes()
        let sampler = PeakSampler()
        var generator = SplitMix64.forTest("rss")
        var checksum = Checksum()
        connection.send(head)
        var sent = 0
        while sent < size {
            let piece = randomBytes(min(256 * 1024, size - sent), &generator)
            checksum.add(piece)
            XCTAssertTrue(connection.send(piece))
            sent += piece.count
        }
        connection.send(form.tail)
        let answer = connection.readResponse(timeout: 30)
        let peak = sampler.stop()
        XCTAssertTrue(answer.text.hasPrefix("HTTP/1.1 201"), answer.text)
        XCTAssertEqual(recorder.last?.body.byteCount, size)
        XCTAssertEqual(recorder.last?.checksum, checksum.value, "the file holds exactly the bytes sent")
        let rise = peak - baseline
        print("rss: baseline \(baseline >> 20) MiB, peak \(peak >> 20) MiB, rise \(rise >> 10) KiB")
        XCTAssertLessThan(rise, 8 << 20, "RSS rose \(rise >> 10) KiB for a \(size >> 20) MiB body")
        XCTAssertTrue(uploadFiles(in: folder).isEmpty)

        // The probe sees a body-sized allocation, so the bound above can fail. Fresh pages of their own
        // (mmap, each touched): an array could reuse pages the allocator kept resident after the upload.
        let probeBaseline = residentBytes()
        let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let mapped, mapped != MAP_FAILED else { return XCTFail("mmap failed") }
        defer { munmap(mapped, size) }
        for offset in stride(from: 0, to: size, by: 4096) { mapped.storeBytes(of: 1, toByteOffset: offset, as: UInt8.self) }
        XCTAssertGreaterThan(residentBytes() - probeBaseline, size * 3 / 4)
    }
}
