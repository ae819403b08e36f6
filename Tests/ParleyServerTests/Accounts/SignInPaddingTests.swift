@testable import ParleyAccounts
import ParleyAuth
@testable import ParleyServer
import XCTest

/// The rule alone: failures wait for the slowest recent check of any cost still stored.
final class SignInPaddingTests: XCTestCase {
    private let old = PasswordCost(memoryKiB: 65_536, operations: 2)
    private let today = PasswordCost(memoryKiB: 8_192, operations: 2)

    func testTheSlowestStoredCostSetsTheTimeUntilItIsRetired() {
        var padding = SignInPadding()
        XCTAssertEqual(padding.target, .zero, "nothing timed yet")
        padding.setStored([old, today])
        padding.record(.milliseconds(20), for: today)
        XCTAssertEqual(padding.target, .milliseconds(20), "an untimed cost does not count yet")
        padding.record(.milliseconds(170), for: old)
        padding.record(.milliseconds(160), for: old)
        XCTAssertEqual(padding.target, .milliseconds(170))
        padding.setStored([today])
        XCTAssertEqual(padding.target, .milliseconds(20), "no enabled account has the old cost any more")
        XCTAssertFalse(padding.isTimed(old))
        padding.record(.milliseconds(150), for: old)
        XCTAssertTrue(padding.stored.contains(old), "a check at a cost shows a hash has it (one `parley user` wrote)")
        XCTAssertEqual(padding.target, .milliseconds(150))
    }

    func testOnlyTheLastChecksCount() {
        var padding = SignInPadding()
        padding.setStored([today])
        padding.record(.milliseconds(500), for: today)  // one slow moment
        for _ in 0..<SignInPadding.samplesPerCost - 1 { padding.record(.milliseconds(20), for: today) }
        XCTAssertEqual(padding.target, .milliseconds(500))
        padding.record(.milliseconds(20), for: today)
        XCTAssertEqual(padding.target, .milliseconds(20), "it has passed out of the last \(SignInPadding.samplesPerCost)")
    }
}
