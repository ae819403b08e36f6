import Foundation
import ParleyHTTP
import ParleyTestSupport
import XCTest

/// `Range: bytes=…` against a body of known size, and `HTTPResponse.Body.sized` on the wire.
final class ByteRangeTests: XCTestCase {
    func testTheFormsOfOneRange() {
        XCTAssertEqual(ByteRange(header: nil, size: 100), .whole)
        XCTAssertEqual(ByteRange(header: "bytes=0-9", size: 100), .partial(0..<10))
        XCTAssertEqual(ByteRange(header: "bytes=90-", size: 100), .partial(90..<100))
        XCTAssertEqual(ByteRange(header: "bytes=-10", size: 100), .partial(90..<100))
        XCTAssertEqual(ByteRange(header: "bytes=-500", size: 100), .partial(0..<100), "a suffix longer than the body is all of it")
        XCTAssertEqual(ByteRange(header: "bytes=50-5000", size: 100), .partial(50..<100), "the end is clamped")
        XCTAssertEqual(ByteRange(header: " BYTES=1-1 ", size: 100), .partial(1..<2))
    }

    func testRangesPastTheEndAre416AndOthersAreIgnored() {
        XCTAssertEqual(ByteRange(header: "bytes=100-", size: 100), .unsatisfiable)
        XCTAssertEqual(ByteRange(header: "bytes=-0", size: 100), .unsatisfiable)
        XCTAssertEqual(ByteRange(header: "bytes=0-", size: 0), .unsatisfiable)
        XCTAssertEqual(ByteRange.unsatisfiable.contentRange(size: 100), "bytes */100")
        // Not served as a range: the whole body (RFC 9110 lets a server ignore Range).
        for header in ["bytes=0-1,5-6", "items=0-1", "bytes=abc", "bytes=5-1", "bytes=-", "bytes=+1-2",
                       "bytes=99999999999999999999-"] {
            XCTAssertEqual(ByteRange(header: header, size: 100), .whole, header)
        }
        XCTAssertEqual(ByteRange.partial(10..<20).contentRange(size: 100), "bytes 10-19/100")
    }

    func testASizedBodyIsSentWithItsLengthNotChunked() throws {
        let bytes = (0..<300_000).map { UInt8($0 % 251) }
        let (_, base) = try startServer(self) { router in
            router.on("GET", "/file") { _ in
                let pieces = PieceSource(bytes)
                return HTTPResponse(body: .sized(length: bytes.count) { pieces.next() })
            }
        }
        let response = try TestHTTPClient().request(base + "/file", timeout: 30)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("content-length"), "300000")
        XCTAssertNil(response.header("transfer-encoding"))
        XCTAssertTrue(response.body == bytes)
    }
}

/// Hands out `bytes` in 64 KiB pieces.
private final class PieceSource: @unchecked Sendable {
    private let bytes: [UInt8]
    private var offset = 0
    private let lock = NSLock()

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func next() -> [UInt8]? {
        lock.lock()
        defer { lock.unlock() }
        guard offset < bytes.count else { return nil }
        let end = min(bytes.count, offset + 65_536)
        defer { offset = end }
        return Array(bytes[offset..<end])
    }
}
