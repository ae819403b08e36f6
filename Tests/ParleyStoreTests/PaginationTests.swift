import Foundation
import ParleyStore
import XCTest

final class PaginationTests: StoreTestCase {
    func testPagesCoverEveryConversationOnceNewestFirstEvenWithEqualTimestamps() throws {
        let clock = ManualClock()
        let store = try makeStore(now: clock.now)
        var created: [Conversation] = []
        for index in 0..<23 {
            // Groups of five share one updated_at, so ties must be broken by id.
            if index % 5 == 0 { clock.advance(milliseconds: 10) }
            created.append(try store.createConversation(title: "c\(index)"))
        }
        let expected = created.sorted {
            ($0.updatedAt, $0.id) > ($1.updatedAt, $1.id)
        }.map(\.id)

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
