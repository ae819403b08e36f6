import Foundation
@testable import ParleyStore
import XCTest

/// Starts that arrive together share one transaction (`SharedCommits`): each is answered after the
/// commit that holds its rows, and one that fails is undone alone.
final class SharedCommitTests: StoreTestCase {
    /// Holds the writer on a thread of its own until `release` is signalled, so the shared writes
    /// submitted meanwhile queue up and go in one batch.
    private func holdWriter(_ store: Store) -> (held: DispatchSemaphore, release: DispatchSemaphore) {
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread {
            _ = try? store.write { (_, _) throws(StoreError) in
                held.signal()
                release.wait()
            }
        }.start()
        return (held, release)
    }

    /// Waits (bounded) until `count` shared writes are queued behind the one that waits for the writer.
    private func waitForQueued(_ store: Store, _ count: Int) async throws {
        let deadline = Date().addingTimeInterval(20)
        while store.sharedCommits.queued < count {
            guard Date() < deadline else {
                return XCTFail("only \(store.sharedCommits.queued) of \(count) writes queued")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    func testTurnsArrivingTogetherShareOneCommitAndAreThereWhenAnswered() async throws {
        let store = try makeStore()
        let conversations = try (0..<8).map { _ in try store.createConversation() }
        let writer = holdWriter(store)
        writer.held.wait()
        let turns = conversations.enumerated().map { index, conversation in
            Task {
                try await store.beginTurnInSharedCommit(
                    conversationID: conversation.id, placement: .afterCurrentLeaf, userContent: "Q\(index)", model: "m")
            }
        }
        // The first waits for the writer with a batch of its own; the other seven queue behind it.
        try await waitForQueued(store, 7)
        writer.release.signal()
        var started: [ReplyStart] = []
        for turn in turns { started.append(try await turn.value) }

        XCTAssertEqual(store.sharedCommits.counts, SharedCommits.Counts(batches: 2, writes: 8, largest: 7))
        // Answered means committed: another connection to the file sees every row.
        let other = try makeStore()
        for (index, start) in started.enumerated() {
            XCTAssertEqual(start.user?.content, "Q\(index)")
            XCTAssertEqual(start.context.map(\.id), [start.user?.id].compactMap { $0 })
            XCTAssertEqual(try other.message(id: start.reply.id)?.status, .streaming)
            XCTAssertEqual(try other.conversation(id: conversations[index].id)?.currentLeafID, start.reply.id)
        }
    }

    func testAFailingStartIsUndoneAloneAndTheOthersOfItsBatchCommit() async throws {
        let store = try makeStore()
        let kept = try (0..<3).map { _ in try store.createConversation() }
        let deleted = try store.createConversation()
        let earlier = try store.appendTurn(conversationID: kept[0].id, parentID: nil, userContent: "first", model: nil)
        try store.deleteConversation(id: deleted.id)
        let writer = holdWriter(store)
        writer.held.wait()
        let good = kept.map { conversation in
            Task { try await store.beginTurnInSharedCommit(conversationID: conversation.id, placement: .afterCurrentLeaf,
                                                           userContent: "kept", model: nil) }
        }
        let gone = Task {
            try await store.beginTurnInSharedCommit(conversationID: deleted.id, placement: .afterCurrentLeaf,
                                                    userContent: "gone", model: nil)
        }
        // A file that does not exist, in a conversation that does: the turn's messages and the leaf's move
        // are written before the file check fails, so its savepoint must undo them.
        let orphan = Task {
            try await store.beginTurnInSharedCommit(conversationID: kept[0].id, placement: .afterCurrentLeaf,
                                                    userContent: "orphan", model: nil, fileIDs: ["no-such-file"])
        }
        let sibling = Task { try await store.beginSiblingInSharedCommit(ofAssistant: earlier.user.id, model: nil) }
        try await waitForQueued(store, 5)
        writer.release.signal()

        await assertThrows(gone, .notFound(.conversation(id: deleted.id)))
        await assertThrows(orphan, .notFound(.file(id: "no-such-file")))
        do {
            _ = try await sibling.value
            XCTFail("a sibling of a user message was written")
        } catch StoreError.conflict {}
        var replies: [String] = []
        for turn in good { replies.append(try await turn.value.reply.id) }
        // The first waited for the writer alone; the other five, the failing three among them, shared a batch.
        XCTAssertEqual(store.sharedCommits.counts, SharedCommits.Counts(batches: 2, writes: 6, largest: 5))

        let other = try makeStore()
        for (conversation, reply) in zip(kept, replies) {
            XCTAssertEqual(try other.currentBranch(conversationID: conversation.id).last?.message.id, reply)
        }
        XCTAssertNil(try other.conversation(id: deleted.id))
        XCTAssertFalse(try other.messages(conversationID: kept[0].id).contains { $0.content == "orphan" })
        XCTAssertEqual(try other.messages(conversationID: kept[0].id).count, 4, "the earlier turn and the kept one")
    }

    func testConversationsAndSiblingsShareCommitsAlone() async throws {
        let store = try makeStore()
        let created = try await store.createConversationInSharedCommit(title: "T", model: "m", ownedBy: User.localID)
        XCTAssertEqual(try store.conversation(id: created.id)?.title, "T")
        let turn = try await store.beginTurnInSharedCommit(conversationID: created.id, placement: .afterCurrentLeaf,
                                                           userContent: "Q", model: nil)
        XCTAssertEqual(turn.reply.model, "m")
        _ = try store.finishMessage(id: turn.reply.id, content: "A", status: .complete)
        let again = try await store.beginSiblingInSharedCommit(ofAssistant: turn.reply.id, model: "n")
        XCTAssertEqual(again.reply.parentID, turn.user?.id)
        XCTAssertEqual(again.context.map(\.id), [turn.user?.id].compactMap { $0 })
        XCTAssertEqual(try store.conversation(id: created.id)?.currentLeafID, again.reply.id)
        // Alone, each was a batch of its own: nothing waits for company.
        XCTAssertEqual(store.sharedCommits.counts, SharedCommits.Counts(batches: 3, writes: 3, largest: 1))
    }

    private func assertThrows(_ task: Task<ReplyStart, any Error>, _ expected: StoreError,
                              file: StaticString = #filePath, line: UInt = #line) async {
        do {
            _ = try await task.value
            XCTFail("no error", file: file, line: line)
        } catch {
            XCTAssertEqual(error as? StoreError, expected, file: file, line: line)
        }
    }
}
