import Foundation
import ParleyStore
import Synchronization
import XCTest

final class ConcurrencyTests: StoreTestCase {
    /// One thread writes turns and progress while more readers than pooled connections read.
    /// No error may surface (no SQLITE_BUSY), and every read sees whole transactions only: a
    /// branch always ends with the assistant half of a turn.
    func testReadersRunBesideTheWriterWithoutErrorsOrTornReads() throws {
        let store = try makeStore(configuration: StoreConfiguration(readers: 2))
        let conversations = try (0..<3).map { _ in try store.createConversation() }
        let failures = Mutex<[String]>([])
        let readsDone = Atomic<Int>(0)
        let writerDone = Atomic<Bool>(false)
        let group = DispatchGroup()

        func spawn(_ body: @escaping @Sendable () -> Void) {
            group.enter()
            Thread {
                body()
                group.leave()
            }.start()
        }

        spawn {
            do {
                for index in 0..<150 {
                    let conversation = conversations[index % conversations.count]
                    let turn = try store.appendTurn(
                        conversationID: conversation.id, parentID: nil, userContent: "q\(index)", model: nil)
                    try store.saveProgress([MessageProgress(id: turn.assistant.id, content: "partial \(index)")])
                    _ = try store.finishMessage(id: turn.assistant.id, content: "answer \(index)", status: .complete)
                }
            } catch {
                failures.withLock { $0.append("writer: \(error)") }
            }
            writerDone.store(true, ordering: .releasing)
        }
        for reader in 0..<4 {
            spawn {
                var rounds = 0
                // Keep reading while the writer runs (and at least a few rounds), bounded.
                while rounds < 20 || (!writerDone.load(ordering: .acquiring) && rounds < 100_000) {
                    rounds += 1
                    do {
                        let conversation = conversations[(reader + rounds) % conversations.count]
                        let branch = try store.currentBranch(conversationID: conversation.id)
                        if branch.count % 2 != 0 || (branch.last.map { $0.message.role != .assistant } ?? false) {
                            failures.withLock { $0.append("torn read: \(branch.count) messages") }
                        }
                        _ = try store.listConversations(limit: 2)
                    } catch {
                        failures.withLock { $0.append("reader \(reader): \(error)") }
                    }
                }
                readsDone.add(rounds, ordering: .relaxed)
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(failures.withLock { $0 }, [])
        XCTAssertGreaterThanOrEqual(readsDone.load(ordering: .relaxed), 80)
        let total = try conversations.reduce(0) { $0 + (try store.currentBranch(conversationID: $1.id).count) }
        XCTAssertEqual(total, 300)
    }

    func testConcurrentWritersAreSerialisedWithoutLosingTurns() throws {
        let store = try makeStore()
        let conversation = try store.createConversation()
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for index in 0..<25 {
                do {
                    _ = try store.appendTurn(
                        conversationID: conversation.id, parentID: nil, userContent: "\(worker)-\(index)", model: nil)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        // Every turn hung under the previous leaf: one unbroken chain.
        XCTAssertEqual(try store.currentBranch(conversationID: conversation.id).count, 200)
    }
}
