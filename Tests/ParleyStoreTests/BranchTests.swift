import Foundation
import ParleyStore
import XCTest

final class BranchTests: StoreTestCase {
    private var store: Store!
    private var conversation: Conversation!

    override func setUpWithError() throws {
        try super.setUpWithError()
        store = try makeStore()
        conversation = try store.createConversation(model: "conversation-model")
    }

    private func turn(_ content: String, parent: String? = nil) throws -> (user: Message, assistant: Message) {
        let turn = try store.appendTurn(conversationID: conversation.id, parentID: parent, userContent: content, model: nil)
        _ = try store.finishMessage(id: turn.assistant.id, content: "re: \(content)", status: .complete)
        return turn
    }

    func testAppendTurnChainsUnderTheCurrentLeafAndMovesIt() throws {
        let first = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "one", model: "m1")
        XCTAssertNil(first.user.parentID)
        XCTAssertEqual(first.user.role, .user)
        XCTAssertEqual(first.user.status, .complete)
        XCTAssertEqual(first.assistant.parentID, first.user.id)
        XCTAssertEqual(first.assistant.role, .assistant)
        XCTAssertEqual(first.assistant.status, .streaming)
        XCTAssertEqual(first.assistant.content, "")
        XCTAssertEqual(first.assistant.model, "m1")

        let second = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "two", model: nil)
        XCTAssertEqual(second.user.parentID, first.assistant.id)
        XCTAssertEqual(second.assistant.model, "conversation-model")
        let updated = try XCTUnwrap(store.conversation(id: conversation.id))
        XCTAssertEqual(updated.currentLeafID, second.assistant.id)
        XCTAssertGreaterThanOrEqual(updated.updatedAt, conversation.updatedAt)
        XCTAssertEqual(try store.currentBranch(conversationID: conversation.id).map(\.message.id),
                       [first.user.id, first.assistant.id, second.user.id, second.assistant.id])
    }

    func testEditingAUserMessageBranchesBesideIt() throws {
        let first = try turn("one")
        let second = try turn("two")
        let edited = try turn("two, edited", parent: first.assistant.id)

        let branch = try store.currentBranch(conversationID: conversation.id)
        XCTAssertEqual(branch.map(\.message.id), [first.user.id, first.assistant.id, edited.user.id, edited.assistant.id])
        XCTAssertEqual(branch[2].siblings, SiblingInfo(index: 1, count: 2, ids: [second.user.id, edited.user.id]))
        XCTAssertEqual(branch[0].siblings, SiblingInfo(index: 0, count: 1, ids: [first.user.id]))
        XCTAssertEqual(branch[3].siblings, SiblingInfo(index: 0, count: 1, ids: [edited.assistant.id]))
    }

    func testEditingTheFirstMessageMakesAnotherRoot() throws {
        let first = try turn("one")
        let edited = try store.appendTurn(conversationID: conversation.id, placement: .root, userContent: "one'", model: nil)
        XCTAssertNil(edited.user.parentID)
        let branch = try store.currentBranch(conversationID: conversation.id)
        XCTAssertEqual(branch.map(\.message.id), [edited.user.id, edited.assistant.id])
        XCTAssertEqual(branch[0].siblings, SiblingInfo(index: 1, count: 2, ids: [first.user.id, edited.user.id]))
    }

    func testRegenerateAddsAStreamingSiblingThatBecomesCurrent() throws {
        let first = try turn("one")
        let regenerated = try store.createSibling(ofAssistant: first.assistant.id, model: "other")
        XCTAssertEqual(regenerated.parentID, first.user.id)
        XCTAssertEqual(regenerated.status, .streaming)
        XCTAssertEqual(regenerated.model, "other")
        let again = try store.createSibling(ofAssistant: first.assistant.id, model: nil)
        XCTAssertEqual(again.model, "conversation-model")

        let branch = try store.currentBranch(conversationID: conversation.id)
        XCTAssertEqual(branch.last?.message.id, again.id)
        XCTAssertEqual(branch.last?.siblings,
                       SiblingInfo(index: 2, count: 3, ids: [first.assistant.id, regenerated.id, again.id]))
    }

    func testRegenerateOfAUserMessageIsAConflict() throws {
        let first = try turn("one")
        XCTAssertThrowsError(try store.createSibling(ofAssistant: first.user.id, model: nil)) { error in
            guard case StoreError.conflict = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try store.createSibling(ofAssistant: "missing", model: nil)) { error in
            guard case StoreError.notFound = error else { return XCTFail("\(error)") }
        }
    }

    func testAppendTurnRejectsAParentFromAnotherConversation() throws {
        let other = try store.createConversation()
        let foreign = try store.appendTurn(conversationID: other.id, parentID: nil, userContent: "x", model: nil)
        XCTAssertThrowsError(try store.appendTurn(
            conversationID: conversation.id, parentID: foreign.assistant.id, userContent: "y", model: nil)) { error in
            guard case StoreError.notFound = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try store.appendTurn(
            conversationID: "missing", parentID: nil, userContent: "y", model: nil)) { error in
            guard case StoreError.notFound = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try store.currentBranch(conversationID: conversation.id), [])
    }

    func testSetCurrentFollowsTheNewestChildToTheDeepestMessage() throws {
        let first = try turn("one")
        let oldBranch = try turn("two")
        _ = try turn("three")
        // A newer branch under first.assistant, two turns deep, with a regenerated reply at the end.
        let newBranch = try turn("two'", parent: first.assistant.id)
        let deep = try turn("three'")
        let regenerated = try store.createSibling(ofAssistant: deep.assistant.id, model: nil)
        // Go back to the old branch, then ask for the newest path from the fork point.
        _ = try store.setCurrent(conversationID: conversation.id, messageID: oldBranch.user.id)
        XCTAssertEqual(try store.conversation(id: conversation.id)?.currentLeafID,
                       try store.currentBranch(conversationID: conversation.id).last?.message.id)
        XCTAssertEqual(try store.currentBranch(conversationID: conversation.id)[2].message.id, oldBranch.user.id)

        let leaf = try store.setCurrent(conversationID: conversation.id, messageID: first.assistant.id)
        XCTAssertEqual(leaf, regenerated.id)
        XCTAssertEqual(try store.currentBranch(conversationID: conversation.id).map(\.message.id),
                       [first.user.id, first.assistant.id, newBranch.user.id, newBranch.assistant.id,
                        deep.user.id, regenerated.id])
        XCTAssertEqual(try store.setCurrent(conversationID: conversation.id, messageID: deep.assistant.id), deep.assistant.id)
    }

    func testSetCurrentRejectsAMessageOfAnotherConversation() throws {
        let other = try store.createConversation()
        let foreign = try store.appendTurn(conversationID: other.id, parentID: nil, userContent: "x", model: nil)
        XCTAssertThrowsError(try store.setCurrent(conversationID: conversation.id, messageID: foreign.user.id)) { error in
            guard case StoreError.notFound = error else { return XCTFail("\(error)") }
        }
    }

    func testContextPathRunsFromRootToTheGivenMessage() throws {
        let first = try turn("one")
        let second = try turn("two")
        XCTAssertEqual(try store.contextPath(leafID: second.user.id).map(\.id),
                       [first.user.id, first.assistant.id, second.user.id])
        XCTAssertThrowsError(try store.contextPath(leafID: "missing")) { error in
            guard case StoreError.notFound = error else { return XCTFail("\(error)") }
        }
    }

    func testCurrentBranchOfUnknownConversationIsNotFound() throws {
        XCTAssertThrowsError(try store.currentBranch(conversationID: "missing")) { error in
            guard case StoreError.notFound = error else { return XCTFail("\(error)") }
        }
    }

    func testMessagesListsEveryBranchInCreationOrder() throws {
        let first = try turn("one")
        let regenerated = try store.createSibling(ofAssistant: first.assistant.id, model: nil)
        XCTAssertEqual(try store.messages(conversationID: conversation.id).map(\.id),
                       [first.user.id, first.assistant.id, regenerated.id])
    }
}
