import Foundation
import ParleyStore
import XCTest

/// Preferences per user (migration 11): the defaults without a row, a change of some fields keeps the
/// others, clearing the optional ones, one user's never another's, kept across a reopen; and the
/// `imported` mark of conversations an import made.
final class PreferencesStoreTests: StoreTestCase {
    func testDefaultsUntilChangedAndAChangeKeepsTheOtherFields() throws {
        let store = try makeStore()
        XCTAssertEqual(try store.preferences(of: "alice"), .defaults)
        let first = try store.updatePreferences(of: "alice", .init(theme: .dark, defaultSystemPrompt: .some("Be brief.")))
        XCTAssertEqual(first, UserPreferences(theme: .dark, defaultSystemPrompt: "Be brief."))
        let second = try store.updatePreferences(of: "alice", .init(defaultModel: .some("demo"), sendKey: .ctrlEnter))
        XCTAssertEqual(second, UserPreferences(theme: .dark, defaultModel: "demo", defaultSystemPrompt: "Be brief.",
                                               sendKey: .ctrlEnter))
        let cleared = try store.updatePreferences(of: "alice", .init(defaultModel: .some(nil), defaultSystemPrompt: .some(nil)))
        XCTAssertEqual(cleared, UserPreferences(theme: .dark, sendKey: .ctrlEnter))
        XCTAssertEqual(try store.preferences(of: "alice"), cleared)
    }

    func testEachUserHasTheirOwnAndTheySurviveAReopen() throws {
        do {
            let store = try makeStore()
            try store.updatePreferences(of: "alice", .init(theme: .light))
            try store.updatePreferences(of: User.localID, .init(sendKey: .ctrlEnter))
            XCTAssertEqual(try store.preferences(of: "bob"), .defaults)
        }
        let reopened = try makeStore()
        XCTAssertEqual(try reopened.preferences(of: "alice").theme, .light)
        XCTAssertEqual(try reopened.preferences(of: "alice").sendKey, .enter)
        XCTAssertEqual(try reopened.preferences(of: User.localID).sendKey, .ctrlEnter)
    }

    func testImportedConversationsAreMarkedAndTheirForksAreNot() throws {
        let store = try makeStore()
        let made = try store.createConversation(title: "Made here", model: nil, systemPrompt: nil)
        XCTAssertFalse(made.imported)
        let now = Date()
        let archive = ConversationArchive(
            conversation: Conversation(id: "x", title: "From a file", model: nil, systemPrompt: nil, currentLeafID: nil,
                                       createdAt: now, updatedAt: now),
            messages: [Message(id: "m", conversationID: "", parentID: nil, role: .user, content: "hi", reasoning: "",
                               status: .complete, finishReason: nil, model: nil, usage: nil, errorCode: nil,
                               errorMessage: nil, html: "<p>hi</p>", createdAt: now, updatedAt: now)])
        let imported = try XCTUnwrap(try store.importConversations([archive], ownedBy: User.localID).first)
        XCTAssertTrue(imported.imported)
        XCTAssertEqual(try store.conversation(id: imported.id)?.imported, true)
        let leaf = try XCTUnwrap(imported.currentLeafID)
        let fork = try store.forkConversation(id: imported.id, ownedBy: User.localID, at: leaf)
        XCTAssertFalse(fork.imported)
    }
}
