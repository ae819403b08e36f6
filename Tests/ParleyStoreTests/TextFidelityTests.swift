import Foundation
import ParleyOutcome
import ParleyStore
import XCTest

/// The store keeps every text exactly: U+0000 and invisible characters included (text used to be
/// bound as a C string, so everything after a U+0000 was lost).
final class TextFidelityTests: StoreTestCase {
    static let samples = ["a\u{0}b", "\u{0}", "hello\u{0}world\u{0}", "\u{FEFF}x\u{200B}\u{2060}", "é\u{0}日本\u{0}👍🏽"]

    func testEveryWrittenTextReadsBackExactly() throws {
        let store = try makeStore()
        for sample in Self.samples {
            let conversation = try store.createConversation(title: sample, model: sample, systemPrompt: sample)
            XCTAssertEqual(conversation.title, sample)
            XCTAssertEqual(conversation.model, sample)
            XCTAssertEqual(conversation.systemPrompt, sample)
            let turn = try store.appendTurn(conversationID: conversation.id, placement: .afterCurrentLeaf,
                                            userContent: sample, model: sample)
            XCTAssertEqual(try store.message(id: turn.user.id)?.content, sample)
            try store.saveProgress([MessageProgress(id: turn.assistant.id, content: sample + sample,
                                                    reasoning: sample)])
            XCTAssertEqual(try store.message(id: turn.assistant.id)?.content, sample + sample)
            XCTAssertEqual(try store.message(id: turn.assistant.id)?.reasoning, sample)
            let finished = try store.finishMessage(id: turn.assistant.id, content: sample, reasoning: sample + "r",
                                                   status: .complete, errorCode: ReplyErrorCode(rawValue: sample), errorMessage: sample,
                                                   html: sample)
            XCTAssertEqual(finished, try store.message(id: turn.assistant.id))
            XCTAssertEqual(finished.content, sample)
            XCTAssertEqual(finished.reasoning, sample + "r")
            XCTAssertEqual(finished.errorMessage, sample)
            let renamed = try store.updateConversation(id: conversation.id, title: sample + "t",
                                                       systemPrompt: .some(sample + "s"))
            XCTAssertEqual(renamed?.title, sample + "t")
            XCTAssertEqual(try store.conversation(id: conversation.id)?.systemPrompt, sample + "s")
        }
    }

    func testAnIDWithAU0000IsNotAnotherID() throws {
        let store = try makeStore()
        let conversation = try store.createConversation()
        // Bound as a C string, "<id>\0junk" was the id itself.
        XCTAssertNil(try store.conversation(id: conversation.id + "\u{0}junk"))
    }
}
