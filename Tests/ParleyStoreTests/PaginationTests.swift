import Foundation
@testable import ParleyStore
import XCTest

final class PaginationTests: StoreTestCase {
    func testPagesCoverEveryConversationOnceNewestFirstEvenWithEqualTimestamps() throws {
        let store = try makeStore()
        var created: [String] = []
        for index in 0..<23 { created.append(try store.createConversation(title: "c\(index)").id) }
        // The store never writes equal timestamps itself (see below); rows imported or written by
        // an older version may have them, so make groups of five share one updated_at by hand.
        let database = try rawConnection()
        for (index, id) in created.enumerated() {
            _ = try database.run(
                "UPDATE conversations SET updated_at = ? WHERE id = ?",
                [.integer(1_700_000_000_000 + Int64(index / 5) * 10), .text(id)])
        }
        let expected = created.enumerated().sorted {
            ($0.offset / 5, $0.element) > ($1.offset / 5, $1.element)
        }.map(\.element)

        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = try store.listConversations(limit: 4, cursor: cursor)
            XCTAssertLessThanOrEqual(page.items.count, 4)
            seen += page.items.map(\.id)
            cursor = page.nextCursor
            pages += 1
        } while cursor != nil && pages < 20
        XCTAssertEqual(seen, expected)
        XCTAssertEqual(pages, 6)
    }

    func testConversationsChangedWithinOneMillisecondKeepTheirOrder() throws {
        let clock = ManualClock()
        let store = try makeStore(now: clock.now)
        var titles: [String] = []
        for index in 0..<10 { titles.append(try store.createConversation(title: "c\(index)").title) }
        XCTAssertEqual(try store.listConversations().items.map(\.title), titles.reversed())

        // A change moves a conversation to the front even with the clock standing still.
        let oldest = try XCTUnwrap(store.listConversations().items.last)
        _ = try store.updateConversation(id: oldest.id, title: "renamed")
        XCTAssertEqual(try store.listConversations(limit: 1).items.map(\.title), ["renamed"])

        // The order survives reopening the file: the next stamp starts above the stored ones.
        let reopened = try makeStore(now: clock.now)
        let newest = try reopened.createConversation(title: "after reopen")
        XCTAssertEqual(try reopened.listConversations(limit: 1).items.map(\.id), [newest.id])
    }

    func testLastFullPageHasNoCursor() throws {
        let store = try makeStore()
        for _ in 0..<4 { _ = try store.createConversation() }
        let page = try store.listConversations(limit: 4)
        XCTAssertEqual(page.items.count, 4)
        XCTAssertNil(page.nextCursor)
    }

    func testUpdatingMovesAConversationToTheFront() throws {
        let clock = ManualClock()
        let store = try makeStore(now: clock.now)
        let old = try store.createConversation(title: "old")
        clock.advance(milliseconds: 1)
        _ = try store.createConversation(title: "new")
        clock.advance(milliseconds: 1)
        _ = try store.updateConversation(id: old.id, title: "old, renamed")
        XCTAssertEqual(try store.listConversations().items.map(\.title), ["old, renamed", "new"])
    }

    func testLimitIsCutToMaxPageSize() throws {
        let store = try makeStore(configuration: StoreConfiguration(maxPageSize: 3))
        for _ in 0..<5 { _ = try store.createConversation() }
        let page = try store.listConversations(limit: 1000)
        XCTAssertEqual(page.items.count, 3)
        XCTAssertNotNil(page.nextCursor)
        XCTAssertEqual(try store.listConversations(limit: 0).items.count, 1)
    }

    func testDefaultPageSizeApplies() throws {
        let store = try makeStore()
        for _ in 0...Store.defaultPageSize { _ = try store.createConversation() }
        let page = try store.listConversations()
        XCTAssertEqual(page.items.count, Store.defaultPageSize)
        XCTAssertEqual(try store.listConversations(cursor: page.nextCursor).items.count, 1)
    }

    func testInvalidCursorsAreRejected() throws {
        let store = try makeStore()
        _ = try store.createConversation()
        let bad = ["", "not base64!", "YWJj" /* "abc" */, "MTIzOg" /* "123:" */,
                   "LTE6YWJj" /* "-1:abc" */, "MTIzOmEgYg" /* "123:a b" */,
                   String(repeating: "A", count: 500)]
        for cursor in bad {
            XCTAssertThrowsError(try store.listConversations(limit: 2, cursor: cursor), cursor) { error in
                XCTAssertEqual(error as? StoreError, .invalidCursor, cursor)
            }
        }
    }
}
