import Foundation
@testable import ParleyGeneration
import ParleyProviders
import ParleyStore
import Synchronization
import XCTest

/// `Generations` keeps a finished reply for `retainFinished` by its injected clock: the test moves the
/// clock and sweeps, and never sleeps to prove that a reply was not released yet.
final class GenerationsRetentionTests: XCTestCase {
    /// A clock that moves only when told.
    private final class ManualInstant: Sendable {
        private let start = ContinuousClock.now
        private let offset = Mutex(Duration.zero)

        var now: ContinuousClock.Instant { start + offset.withLock { $0 } }

        func advance(by duration: Duration) {
            offset.withLock { $0 += duration }
        }
    }

    func testAFinishedReplyIsKeptUntilTheClockSaysItsTimeIsUp() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-retention-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(path: directory.appendingPathComponent("parley.sqlite").path)
        let time = ManualInstant()
        let generations = Generations(
            store: store, providers: ProviderRegistry(providers: [], demo: DemoProvider(tokensPerSecond: 0)),
            limits: GenerationLimits(retainFinished: .seconds(30)), clock: RetentionClock { time.now })
        let conversation = try store.createConversation(model: DemoProvider.modelID)
        let (_, reply) = try await generations.send(conversationID: conversation.id, placement: .afterCurrentLeaf,
                                                   content: "hello", model: nil, owner: User.localID)

        let outcome = try await generations.outcome(of: reply.id)
        XCTAssertEqual(outcome.status, .complete)
        XCTAssertEqual(outcome.usage, try store.message(id: reply.id)?.usage, "done carries the stored usage")
        let live = await generations.liveCount
        XCTAssertEqual(live, 0, "once the outcome is known the reply is no longer live")
        var kept = await generations.retainedCount
        XCTAssertEqual(kept, 1)

        time.advance(by: .seconds(29))
        await generations.expireRetained()
        kept = await generations.retainedCount
        XCTAssertEqual(kept, 1, "not before its time")

        time.advance(by: .seconds(1))
        await generations.expireRetained()
        kept = await generations.retainedCount
        XCTAssertEqual(kept, 0, "released at its time")
        // Released: the outcome now comes from the store, the same.
        let stored = try await generations.outcome(of: reply.id)
        XCTAssertEqual(stored.status, outcome.status)
        XCTAssertEqual(stored.finishReason, outcome.finishReason)
        XCTAssertEqual(stored.blockCount, outcome.blockCount)
    }
}
