import Foundation
import ParleyStore
import XCTest

final class ConversationTests: StoreTestCase {
    func testCreateUsesDefaultTitleAndRandomURLSafeIDs() throws {
        let store = try makeStore()
        let first = try store.createConversation()
        let second = try store.createConversation(title: "Named", model: "demo", systemPrompt: "sys")
        XCTAssertEqual(first.title, Store.defaultTitle)
        XCTAssertNil(first.currentLeafID)
        XCTAssertEqual(second.model, "demo")
        XCTAssertEqual(second.systemPrompt, "sys")
        XCTAssertNotEqual(first.id, second.id)
        for id in [first.id, second.id] {
            XCTAssertEqual(id.count, 22)
            XCTAssertTrue(id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }, id)
        }
        XCTAssertEqual(try store.conversation(id: first.id), first)
    }

    func testUpdateLeavesNilFieldsAndClearsSomeNil() throws {
        let clock = ManualClock()
        let store = try makeStore(now: clock.now)
        let created = try store.createConversation(title: "T", model: "m", systemPrompt: "p")
        clock.advance(milliseconds: 5)

        let retitled = try XCTUnwrap(store.updateConversation(id: created.id, title: "T2"))
        XCTAssertEqual(retitled.title, "T2")
        XCTAssertEqual(retitled.model, "m")
        XCTAssertEqual(retitled.systemPrompt, "p")
        XCTAssertEqual(retitled.updatedAt.timeIntervalSince1970, created.updatedAt.timeIntervalSince1970 + 0.005, accuracy: 0.0001)

        let cleared = try XCTUnwrap(store.updateConversation(id: created.id, systemPrompt: .some(nil), model: "m2"))
        XCTAssertEqual(cleared.title, "T2")
        XCTAssertNil(cleared.systemPrompt)
        XCTAssertEqual(cleared.model, "m2")
        XCTAssertEqual(try store.conversation(id: created.id), cleared)
    }

    func testUpdateOfUnknownConversationReturnsNil() throws {
        let store = try makeStore()
        XCTAssertNil(try store.updateConversation(id: "nope", title: "x"))
    }

    func testDeleteRemovesTheConversationAndAllItsMessages() throws {
        let store = try makeStore()
        let doomed = try store.createConversation()
        let kept = try store.createConversation()
        let turn = try store.appendTurn(conversationID: doomed.id, parentID: nil, userContent: "a", model: nil)
        let sibling = try store.createSibling(ofAssistant: turn.assistant.id, model: nil)
        let keptTurn = try store.appendTurn(conversationID: kept.id, parentID: nil, userContent: "b", model: nil)

        XCTAssertTrue(try store.deleteConversation(id: doomed.id))
        XCTAssertNil(try store.conversation(id: doomed.id))
        for id in [turn.user.id, turn.assistant.id, sibling.id] {
            XCTAssertNil(try store.message(id: id))
        }
        XCTAssertNotNil(try store.message(id: keptTurn.assistant.id))
        XCTAssertFalse(try store.deleteConversation(id: doomed.id))
    }
}
