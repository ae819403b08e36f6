import Foundation
import ParleyStore
import XCTest

/// Export reads, import (checked as a tree, written all or nothing with new ids) and fork, on a real
/// SQLite file.
final class ArchiveTests: StoreTestCase {
    private let time = Date(timeIntervalSince1970: 1_700_000_000)

    private func message(_ id: String, parent: String?, role: Role = .user, status: MessageStatus = .complete,
                         at offset: Double = 0) -> Message {
        Message(id: id, conversationID: "", parentID: parent, role: role, content: "text of \(id)",
                reasoning: role == .assistant ? "thinking \(id)" : "", status: status, finishReason: nil,
                model: role == .assistant ? "demo" : nil, usage: role == .assistant ? ReplyTokens(inputTokens: nil, outputTokens: 3) : nil,
                errorCode: nil, errorMessage: nil, html: "<p>\(id)</p>",
                createdAt: time.addingTimeInterval(offset), updatedAt: time.addingTimeInterval(offset))
    }

    private func archive(_ messages: [Message], leaf: String? = nil, title: String = "Imported") -> ConversationArchive {
        ConversationArchive(
            conversation: Conversation(id: "old", title: title, model: "demo", systemPrompt: "sys", currentLeafID: leaf,
                                       createdAt: time, updatedAt: time, pinned: true, archived: false),
            messages: messages)
    }

    func testAnImportKeepsTheTreeUnderNewIds() throws {
        let store = try makeStore()
        // Listed children first: the order in the file does not matter.
        let file = archive([message("b2", parent: "a", role: .assistant, at: 2), message("a", parent: nil, at: 0),
                            message("b1", parent: "a", role: .assistant, at: 1)], leaf: "b1")
        let imported = try store.importConversations([file], ownedBy: "alice")
        XCTAssertEqual(imported.count, 1)
        let conversation = imported[0]
        XCTAssertNotEqual(conversation.id, "old")
        XCTAssertEqual(conversation.ownerID, "alice")
        XCTAssertEqual(conversation.title, "Imported")
        XCTAssertTrue(conversation.pinned)
        XCTAssertEqual(conversation.createdAt, time)
        let saved = try XCTUnwrap(try store.archive(conversationID: conversation.id, ownedBy: "alice"))
        XCTAssertEqual(saved.messages.map(\.content), ["text of a", "text of b1", "text of b2"])
        let root = saved.messages[0]
        XCTAssertFalse(["a", "b1", "b2"].contains(root.id))
        XCTAssertEqual(saved.messages[1].parentID, root.id)
        XCTAssertEqual(saved.messages[2].parentID, root.id)
        XCTAssertEqual(saved.messages[1].reasoning, "thinking b1")
        XCTAssertEqual(saved.messages[1].usage, ReplyTokens(inputTokens: nil, outputTokens: 3))
        XCTAssertEqual(conversation.currentLeafID, saved.messages[1].id)
        XCTAssertNil(try store.archive(conversationID: conversation.id, ownedBy: "bob"), "another user's")
        // Imported finished messages are found, by their owner only.
        XCTAssertEqual(try store.search("text", ownedBy: "alice").hits.first?.conversation.id, conversation.id)
        XCTAssertEqual(try store.search("text", ownedBy: "bob").hits.count, 0)
    }

    func testAFaultyTreeImportsNothing() throws {
        let store = try makeStore()
        let good = archive([message("a", parent: nil)])
        let faults: [(ConversationArchive, String)] = [
            (archive([message("a", parent: "b"), message("b", parent: "a")]), "cycle"),
            (archive([message("a", parent: nil), message("b", parent: "c"), message("c", parent: "b")]), "cycle"),
            (archive([message("a", parent: "missing")]), "'missing'"),
            (archive([message("a", parent: nil), message("a", parent: nil)]), "two messages"),
            (archive([message("a", parent: nil, status: .streaming)]), "streaming"),
            (archive([message("a", parent: nil)], leaf: "z"), "current_leaf_id"),
            (archive([message("", parent: nil)]), "empty"),
        ]
        for (bad, expected) in faults {
            XCTAssertThrowsError(try store.importConversations([good, bad], ownedBy: User.localID)) { error in
                guard case StoreError.invalidImport(let why) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(why.hasPrefix("conversations[1]: "), why)
                XCTAssertTrue(why.contains(expected), why)
            }
        }
        XCTAssertEqual(try store.listConversations(archived: nil).items.count, 0, "not even the good one")
    }

    func testExportPagesGoOnPastADeletedConversation() throws {
        let store = try makeStore()
        let ids = try (0..<5).map { try store.createConversation(title: "c\($0)", ownedBy: "alice").id }
        _ = try store.createConversation(ownedBy: "bob")
        let first = try store.conversationKeys(ownedBy: "alice", after: nil, limit: 2)
        XCTAssertEqual(first.map(\.id), Array(ids.prefix(2)))
        try store.deleteConversation(id: ids[1], ownedBy: "alice")
        let rest = try store.conversationKeys(ownedBy: "alice", after: first.last, limit: 10)
        XCTAssertEqual(rest.map(\.id), Array(ids.suffix(3)), "the page after a deleted conversation's key")
    }

    func testForkCopiesThePathToTheMessage() throws {
        let store = try makeStore()
        let source = try store.createConversation(title: "Source", model: "demo", systemPrompt: "sys", ownedBy: "alice")
        let first = try store.appendTurn(conversationID: source.id, parentID: nil, userContent: "q1", model: nil)
        _ = try store.finishMessage(id: first.assistant.id, content: "a1", status: .complete)
        let second = try store.appendTurn(conversationID: source.id, parentID: nil, userContent: "q2", model: nil)

        XCTAssertThrowsError(try store.forkConversation(id: source.id, ownedBy: "alice", at: second.assistant.id)) {
            guard case StoreError.conflict = $0 else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try store.forkConversation(id: source.id, ownedBy: "bob", at: first.assistant.id)) {
            guard case StoreError.notFound = $0 else { return XCTFail("\($0)") }
        }
        let other = try store.createConversation(ownedBy: "alice")
        XCTAssertThrowsError(try store.forkConversation(id: other.id, ownedBy: "alice", at: first.assistant.id)) {
            guard case StoreError.notFound = $0 else { return XCTFail("\($0)") }
        }

        let fork = try store.forkConversation(id: source.id, ownedBy: "alice", at: first.assistant.id)
        XCTAssertEqual(fork.title, "Source")
        XCTAssertEqual(fork.systemPrompt, "sys")
        XCTAssertFalse(fork.pinned)
        let copied = try store.currentBranch(conversationID: fork.id).map(\.message)
        XCTAssertEqual(copied.map(\.content), ["q1", "a1"])
        XCTAssertEqual(copied[1].parentID, copied[0].id)
        XCTAssertEqual(fork.currentLeafID, copied[1].id)
        XCTAssertEqual(copied[1].createdAt, try XCTUnwrap(try store.message(id: first.assistant.id)).createdAt)
        XCTAssertEqual(try store.messages(conversationID: source.id).count, 4, "the source is untouched")
    }
}
