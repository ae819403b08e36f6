import Foundation
import ParleyAuth
import XCTest

/// SHA-256 through nettle against FIPS 180-2's published vectors, fed whole, in pieces and from a
/// file, so the streaming paths agree with the one-shot one.
final class SHA256DigestTests: XCTestCase {
    private let vectors: [(input: String, digest: String)] = [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ]

    func testKnownVectors() {
        for (input, digest) in vectors {
            XCTAssertEqual(SHA256Digest.hex(of: Array(input.utf8)), digest, input)
        }
    }

    func testOneMillionAsFedInUnevenPieces() {
        var digest = SHA256Digest()
        var left = 1_000_000
        var size = 1
        while left > 0 {
            let piece = min(size, left)
            digest.update([UInt8](repeating: UInt8(ascii: "a"), count: piece))
            left -= piece
            size = size * 3 + 1
        }
        XCTAssertEqual(digest.finalize(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testACopyContinuesIndependently() {
        var prefix = SHA256Digest()
        prefix.update(Array("ab".utf8))
        var other = prefix
        prefix.update(Array("c".utf8))
        other.update(Array("d".utf8))
        XCTAssertEqual(prefix.finalize(), SHA256Digest.hex(of: Array("abc".utf8)))
        XCTAssertEqual(other.finalize(), SHA256Digest.hex(of: Array("abd".utf8)))
    }

    func testAFileIsHashedInChunksLikeItsBytes() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("parley-sha-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        let bytes = (0..<300_001).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        try Data(bytes).write(to: url)
        let whole = SHA256Digest.hex(of: bytes)
        XCTAssertEqual(try SHA256Digest.hex(ofFile: url), whole)
        XCTAssertEqual(try SHA256Digest.hex(ofFile: url, chunkSize: 7), whole, "chunk edges do not matter")

        try Data("abc".utf8).write(to: url)
        XCTAssertEqual(try SHA256Digest.hex(ofFile: url), vectors[1].digest)
    }

    func testAMissingFileIsAnError() {
        let url = URL(fileURLWithPath: "/nonexistent/parley-\(UUID().uuidString)")
        XCTAssertThrowsError(try SHA256Digest.hex(ofFile: url)) { error in
            XCTAssertEqual((error as? SHA256Digest.ReadError)?.errno, ENOENT)
        }
    }
}
