import Foundation
@testable import ParleyStore
import XCTest

/// The WAL's checkpoints run on the store's own thread (`Checkpointer`): commits never run one, yet the
/// WAL stays bounded and every commit is kept.
final class CheckpointTests: StoreTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try requireSQLite("SQLite's own files: PostgreSQL is backed up with pg_dump")
    }

    private func walBytes() -> Int {
        (try? FileManager.default.attributesOfItem(atPath: databasePath + "-wal")[.size] as? Int) ?? 0
    }

    private func smallLimits() -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.checkpoints = Checkpointer.Limits(pages: 16, hardPages: 64, interval: .milliseconds(20))
        return configuration
    }

    func testABurstOfWritesKeepsTheWALBoundedAndEveryCommit() throws {
        var store: Store? = try makeStore(configuration: smallLimits())
        let conversation = try XCTUnwrap(store).createConversation()
        var turns: [String] = []
        for index in 0..<20 {
            turns.append(try XCTUnwrap(store).appendTurn(
                conversationID: conversation.id, parentID: nil, userContent: "Q\(index)", model: nil).assistant.id)
        }
        // About 40 MB through the WAL (16 KB of text per save, each on its own commit), as fast as one
        // thread commits: far more than the bound, so only checkpoints keep the WAL small.
        let text = String(repeating: "0123456789abcdef", count: 1024)
        var largest = 0
        var written = 0
        for round in 0..<2500 {
            let id = turns[round % turns.count]
            try XCTUnwrap(store).saveProgress([MessageProgress(id: id, content: "\(round) \(text)")])
            written += text.utf8.count
            largest = max(largest, walBytes())
        }
        let counts = try XCTUnwrap(XCTUnwrap(store).checkpointer).completed
        XCTAssertGreaterThan(counts.passive, 0, "checkpoints ran on their own thread")
        XCTAssertEqual(counts.failed, 0)
        // Reused, not grown with every commit. How far it grows first depends on the machine: the writer
        // can reuse the WAL only at a moment when every page is copied and no copy is under way, and this
        // loop commits as fast as one thread can (runs on a loaded 2-core machine peaked at 7-17 MB).
        XCTAssertGreaterThan(counts.passive + counts.byWriter, 10)
        XCTAssertLessThan(largest, written / 2, "the WAL was reused: largest \(largest) bytes of \(written) written, \(counts)")

        // Quiet: the last pages are copied within an interval or two, and the next commit cuts the
        // file back to the limit (journal_size_limit).
        let quietUntil = Date().addingTimeInterval(5)
        var copied = false
        while Date() < quietUntil, !copied {
            Thread.sleep(forTimeInterval: 0.05)
            copied = try XCTUnwrap(XCTUnwrap(store).checkpointer).completed.passive > counts.passive
        }
        XCTAssertTrue(copied, "a quiet store is checkpointed by the interval")
        try XCTUnwrap(store).saveProgress([MessageProgress(id: turns[0], content: "last")])
        XCTAssertLessThanOrEqual(walBytes(), 32 * 4096 + 4096, "the -wal file is cut back after the WAL is reused")

        store = nil
        let reopened = try makeStore()
        XCTAssertEqual(try reopened.message(id: turns[0])?.content, "last")
        for (index, id) in turns.enumerated().dropFirst() {
            let last = (0..<2500).last { $0 % turns.count == index }
            XCTAssertEqual(try reopened.message(id: id)?.content, "\(last ?? -1) \(text)")
        }
    }

    func testConcurrentWritersAndReadersSeeEveryCommitWhileCheckpointsRun() throws {
        let store = try makeStore(configuration: smallLimits())
        let conversation = try store.createConversation()
        let ids = try (0..<8).map { index in
            try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "\(index)", model: nil)
                .assistant.id
        }
        let text = String(repeating: "x", count: 8192)
        DispatchQueue.concurrentPerform(iterations: ids.count * 2) { worker in
            let id = ids[worker % ids.count]
            for round in 0..<150 {
                if worker < ids.count {
                    do {
                        _ = try store.saveProgress([MessageProgress(id: id, content: "\(round) \(text)")])
                    } catch {
                        XCTFail("write \(round) failed: \(error)")
                    }
                } else {
                    // A reader always sees a whole commit: a round number and the full text after it.
                    let content = (try? store.message(id: id)?.content) ?? ""
                    XCTAssertTrue(content.isEmpty || content.hasSuffix(text), "torn read at \(round)")
                }
            }
        }
        XCTAssertGreaterThan(try XCTUnwrap(store.checkpointer).completed.passive, 0)
        XCTAssertEqual(try XCTUnwrap(store.checkpointer).completed.failed, 0)
        for id in ids {
            XCTAssertEqual(try store.message(id: id)?.content, "149 \(text)")
        }
    }
}
