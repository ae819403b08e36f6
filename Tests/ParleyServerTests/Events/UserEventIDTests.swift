@testable import ParleyEvents
@testable import ParleyServer
import XCTest

/// The user event stream's ids and its per-user log, alone (no server).
final class UserEventIDTests: XCTestCase {
    func testTheThreeFormsRoundTrip() throws {
        for text in ["0", "42", "1796137997550227", "42.7", "1796137997550227.1796137997549486", "42.done"] {
            let id = try XCTUnwrap(UserEventID(text), text)
            XCTAssertEqual(id.text, text)
        }
        XCTAssertEqual(UserEventID("42.7"), UserEventID(notification: 42, reply: .at(7)))
        XCTAssertEqual(UserEventID("42.done"), UserEventID(notification: 42, reply: .done))
        XCTAssertEqual(UserEventID("42"), UserEventID(notification: 42))
    }

    func testAnythingElseIsRefused() {
        for text in ["", ".", "1.", ".1", "1.2.3", "-1", "+1", "1.-2", "1.+2", " 1", "1 ", "1.x", "x", "1.DONE",
                     "1e3", "0x10", "１", "1234567890123456789", "1.1234567890123456789", "1,2"] {
            XCTAssertNil(UserEventID(text), text.debugDescription)
        }
    }

    func testTheLogSizeIsASetting() throws {
        XCTAssertEqual(try ParleyConfiguration(environment: [:], arguments: []).userEventLogSize, 256)
        XCTAssertEqual(try ParleyConfiguration(environment: ["PARLEY_USER_EVENT_LOG": "7"], arguments: []).userEventLogSize, 7)
        for bad in ["0", "-1", "many", "100001"] {
            XCTAssertThrowsError(try ParleyConfiguration(environment: ["PARLEY_USER_EVENT_LOG": bad], arguments: [])) {
                XCTAssertTrue("\($0)".contains("PARLEY_USER_EVENT_LOG"), "\($0)")
            }
        }
    }

    func testTheLogReplaysExactlyWhatFollowsAnIdItStillCovers() throws {
        var log = UserEventLog(capacity: 3, after: 100)
        let first = log.append([1], now: 50)  // a clock behind the log: ids still grow
        XCTAssertEqual(first.id, 101)
        let second = log.append([2], now: 200)
        XCTAssertEqual(second.id, 200)
        let third = log.append([3], now: 200)
        XCTAssertEqual(third.id, 201)
        XCTAssertEqual(log.entries(after: 100)?.map(\.frame), [[1], [2], [3]])
        XCTAssertEqual(log.entries(after: 101)?.map(\.frame), [[2], [3]])
        XCTAssertEqual(log.entries(after: 201)?.map(\.frame), [])
        XCTAssertNil(log.entries(after: 99), "older than the log")
        XCTAssertNil(log.entries(after: 202), "never issued (another run's id)")

        // Full: the oldest falls out and the floor moves to it.
        log.append([4], now: 0)
        XCTAssertEqual(log.count, 3)
        XCTAssertEqual(log.floorID, 101)
        XCTAssertNil(log.entries(after: 100), "the first notification is gone: resync")
        XCTAssertEqual(log.entries(after: 101)?.map(\.frame), [[2], [3], [4]])
        for index in 5...9 { log.append([UInt8(index)], now: 0) }
        XCTAssertEqual(log.entries(after: log.floorID)?.map(\.frame), [[7], [8], [9]])
        XCTAssertEqual(log.entries(after: log.lastID - 1)?.map(\.frame), [[9]])
    }
}
