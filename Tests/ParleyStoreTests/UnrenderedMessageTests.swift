import Foundation
import ParleyStore
import XCTest

/// Finished messages stored without HTML are found (and only they), and `saveHTML` fills in only
/// missing HTML: what the startup render relies on.
final class UnrenderedMessageTests: StoreTestCase {
    func testOnlyFinishedMessagesWithoutHTMLAreListedAndSaveHTMLNeverOverwrites() throws {
        let clock = ManualClock()
        let store = try makeStore(now: clock.now)
        let conversation = try store.createConversation()
        let rendered = try store.appendTurn(conversationID: conversation.id, placement: .afterCurrentLeaf,
                                            userContent: "q", model: nil)
        _ = try store.finishMessage(id: rendered.assistant.id, content: "a", status: .complete, html: "<p>a</p>")
        let bare = try store.appendTurn(conversationID: conversation.id, placement: .afterCurrentLeaf,
                                        userContent: "q2", model: nil)
        let cut = try store.finishMessage(id: bare.assistant.id, content: "# cut", status: .interrupted)
        let live = try store.appendTurn(conversationID: conversation.id, placement: .afterCurrentLeaf,
                                        userContent: "q3", model: nil)

        // Never the user messages (all without HTML: shown as typed) nor the streaming reply.
        XCTAssertEqual(try store.finishedMessagesWithoutHTML().map(\.id), [cut.id], "not the streaming reply")
        clock.advance(milliseconds: 5000)
        let changed = try store.saveHTML([cut.id: "<h1>cut</h1>", rendered.assistant.id: "<p>other</p>",
                                          live.assistant.id: "<p>live</p>", "missing": "<p>x</p>"])
        XCTAssertEqual(changed, 1)
        let saved = try XCTUnwrap(store.message(id: cut.id))
        XCTAssertEqual(saved.html, "<h1>cut</h1>")
        XCTAssertEqual(saved.updatedAt, cut.updatedAt, "rendering is not an edit")
        XCTAssertEqual(try store.message(id: rendered.assistant.id)?.html, "<p>a</p>", "stored HTML is kept")
        XCTAssertNil(try store.message(id: live.assistant.id)?.html, "a streaming reply gets HTML when it ends")
        XCTAssertEqual(try store.finishedMessagesWithoutHTML(), [])
        XCTAssertEqual(try store.saveHTML([rendered.user.id: "<p>q</p>"]), 0, "a user message never gets HTML")
        XCTAssertNil(try store.message(id: rendered.user.id)?.html)
    }

    func testAUserMessageCannotBeAParent() throws {
        let store = try makeStore()
        let conversation = try store.createConversation()
        let turn = try store.appendTurn(conversationID: conversation.id, placement: .afterCurrentLeaf,
                                        userContent: "q", model: nil)
        XCTAssertThrowsError(try store.appendTurn(conversationID: conversation.id,
                                                  placement: .under(messageID: turn.user.id), userContent: "q'",
                                                  model: nil)) { error in
            guard case StoreError.notFound = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try store.messages(conversationID: conversation.id).count, 2, "nothing was added")
        XCTAssertNoThrow(try store.appendTurn(conversationID: conversation.id,
                                              placement: .under(messageID: turn.assistant.id), userContent: "next",
                                              model: nil))
    }
}
