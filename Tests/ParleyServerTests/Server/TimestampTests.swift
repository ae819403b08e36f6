import Foundation
@testable import ParleyAPI
@testable import ParleyServer
import XCTest

/// The digit-by-digit stamp against a formatter: zero padding of every field and the milliseconds
/// (to the nearest: a stored whole millisecond reads back as a Double just below it).
final class TimestampTests: XCTestCase {
    func testFormatMatchesISO8601WithMilliseconds() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
        let stamps: [Int64] = [0, 1, 9, 10, 999, 1000, 1_764_547_200_123, 1_798_761_599_999, 32_503_680_000_007]
        for millis in stamps {
            let date = Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
            let expected = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(millis / 1000)))
                .replacingOccurrences(of: ".000Z", with: String(format: ".%03dZ", Int(millis % 1000)))
            XCTAssertEqual(Timestamp.format(date), expected, "\(millis)")
        }
        XCTAssertEqual(Timestamp.format(Date(timeIntervalSince1970: 1_764_547_200.1236)), "2025-12-01T00:00:00.124Z")
    }
}
