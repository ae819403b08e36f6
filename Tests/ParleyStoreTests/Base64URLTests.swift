import Foundation
import ParleyPrimitives
import XCTest
@testable import ParleyStore

/// The hand-written encoder against Foundation's base64 with the URL-safe substitutions, for every
/// length up to three whole blocks past an id and every value of the last byte.
final class Base64URLTests: XCTestCase {
    func testEncodeMatchesFoundationForEveryLengthAndTailValue() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...52 {
            for last in [0, 1, 63, 64, 127, 128, 254, 255] as [UInt8] {
                var bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
                if length > 0 { bytes[length - 1] = last }
                let expected = Data(bytes).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: "")
                let encoded = Base64URL.encode(bytes)
                XCTAssertEqual(encoded, expected, "length \(length)")
                XCTAssertEqual(Base64URL.decode(encoded), bytes, "length \(length)")
            }
        }
    }

    func testRecordIDsAre22URLSafeCharactersAndDistinct() {
        let ids = (0..<1000).map { _ in RecordID.make() }
        XCTAssertEqual(Set(ids).count, ids.count)
        for id in ids {
            XCTAssertEqual(id.utf8.count, 22)
            XCTAssertNil(id.first { !($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
            XCTAssertEqual(Base64URL.decode(id)?.count, 16)
        }
    }
}
