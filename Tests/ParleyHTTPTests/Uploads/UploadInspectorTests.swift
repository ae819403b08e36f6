import Foundation
import ParleyHTTP
import ParleyTestSupport
import Synchronization
import XCTest

/// A route's `UploadInspector` sees exactly the file's bytes, in order, as they are written (raw
/// bodies, and multipart without its framing), and its result reaches the handler; a refused upload
/// never reaches `finish`.
final class UploadInspectorTests: XCTestCase {
    /// What one inspector saw: a checksum of the bytes in order, how many, and in how many pieces.
    struct Seen: Sendable, Equatable {
        var checksum: UInt64
        var bytes: Int
        var pieces: Int
    }

    /// What the handler and the inspectors report, shared with the server's threads.
    final class Log: Sendable {
        let seen = Mutex<[Seen?]>([])
        let finished = Mutex(0)
    }

    final class ChecksumInspector: UploadInspector {
        private var checksum = Checksum()
        private var bytes = 0
        private var pieces = 0
        private let log: Log

        init(log: Log) {
            self.log = log
        }

        func inspect(_ bytes: UnsafeRawBufferPointer) {
            checksum.add(Array(bytes))
            self.bytes += bytes.count
            pieces += 1
        }

        func finish() -> any Sendable {
            log.finished.withLock { $0 += 1 }
            return Seen(checksum: checksum.value, bytes: bytes, pieces: pieces)
        }
    }

    private let log = Log()

    private func start(maxBytes: Int = 8 << 20) throws -> String {
        let folder = makeUploadFolder(self)
        let log = log
        let (_, base) = try startServer(self, configure: { $0.uploadDirectory = folder }, routes: { router in
            router.on("POST", "/api/upload", upload: UploadRoute(
                maxBytes: maxBytes, inspector: { ChecksumInspector(log: log) }
            ) { _, body in
                log.seen.withLock { $0.append(body.inspection as? Seen) }
                return .text("\(body.byteCount)", status: 201)
            })
        })
        return base
    }

    private func post(_ base: String, _ body: [UInt8], contentType: String, query: String = "")
        throws -> TestHTTPClient.Response {
        try TestHTTPClient().request("POST", base + "/api/upload" + query, headers: [("Content-Type", contentType)],
                                     body: body)
    }

    private func checksum(_ bytes: [UInt8]) -> UInt64 {
        var checksum = Checksum()
        checksum.add(bytes)
        return checksum.value
    }

    func testARawBodyIsSeenWholeAndInOrder() throws {
        let base = try start()
        var generator = SplitMix64.forTest("inspector-raw")
        let content = randomBytes(2 << 20 + 77, &generator)
        let response = try post(base, content, contentType: "application/octet-stream", query: "?filename=a.bin")
        XCTAssertEqual(response.status, 201, response.text)
        let seen = try XCTUnwrap(log.seen.withLock { $0.last } ?? nil, "the handler got the inspector's result")
        XCTAssertEqual(seen.bytes, content.count)
        XCTAssertEqual(seen.checksum, checksum(content))
        XCTAssertGreaterThan(seen.pieces, 1, "2 MB arrive in pieces, each seen as it is written")
    }

    func testMultipartFramingIsNotSeen() throws {
        let base = try start()
        var generator = SplitMix64.forTest("inspector-multipart")
        let content = randomBytes(300_001, &generator)
        let form = Multipart()
        let body = form.body([
            Multipart.Part(name: "purpose", bytes: Array("chat".utf8)),
            Multipart.Part(name: "file", filename: "x.bin", contentType: "application/octet-stream", bytes: content),
        ])
        let response = try post(base, body, contentType: form.contentType)
        XCTAssertEqual(response.status, 201, response.text)
        let seen = try XCTUnwrap(log.seen.withLock { $0.last } ?? nil)
        XCTAssertEqual(seen.bytes, content.count)
        XCTAssertEqual(seen.checksum, checksum(content))
    }

    func testARefusedUploadIsNeverFinished() throws {
        let base = try start(maxBytes: 1000)
        let form = Multipart()
        // No Content-Length limit to catch at headers time: the file part turns out too big mid-body.
        let tooBig = try post(base, form.file([UInt8](repeating: 65, count: 5000)), contentType: form.contentType)
        XCTAssertEqual(tooBig.status, 413)
        let broken = try post(base, Array("--nope\r\n".utf8), contentType: form.contentType)
        XCTAssertEqual(broken.status, 400)
        XCTAssertEqual(log.finished.withLock { $0 }, 0)
        XCTAssertTrue(log.seen.withLock { $0.isEmpty }, "no handler ran")
    }
}
