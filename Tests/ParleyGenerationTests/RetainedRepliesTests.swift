import Foundation
@testable import ParleyGeneration
import ParleyMarkdown
import ParleyStore
import XCTest

/// Finished replies are kept for `retainFinished` and released by the ticker's sweep, judged by the
/// injected instants: no test sleeps to prove a reply was, or was not yet, released.
final class RetainedRepliesTests: XCTestCase {
    private struct NoRecorder: ReplyRecorder {
        func recordEnd(of messageID: String, _ end: ReplyEnd) throws(StoreError) -> Message {
            throw StoreError.conflict("not recorded")
        }

        func recordProgress(_ updates: [MessageProgress]) throws(StoreError) {}
    }

    private func generation(_ id: String) -> Generation {
        let message = Message(id: id, conversationID: "c", parentID: "u", role: .assistant, content: "", status: .streaming,
                              finishReason: nil, model: nil, usage: nil, errorCode: nil, errorMessage: nil, html: nil,
                              createdAt: Date(), updatedAt: Date())
        return Generation(message: message, owner: "local", model: "demo", recorder: NoRecorder(),
                          limits: GenerationLimits(), renderer: MarkdownRenderer(), ticker: FrameTicker()) { _, _ in }
    }

    func testAReplyIsKeptUntilItsTimeIsUpAndNotAMomentLonger() {
        let start = ContinuousClock.now
        var retained = RetainedReplies(keep: .seconds(30))
        retained.retain(generation("a"), lastEventID: 7, at: start)
        retained.retain(generation("b"), lastEventID: 9, at: start + .seconds(10))

        XCTAssertEqual(retained.expire(at: start + .seconds(29)), 0, "not before its time")
        XCTAssertEqual(retained.lastEventID(for: "a"), 7)
        XCTAssertEqual(retained.expire(at: start + .seconds(30)), 1, "at its time")
        XCTAssertNil(retained.generation(for: "a"))
        XCTAssertNotNil(retained.generation(for: "b"), "the later one stays")
        XCTAssertEqual(retained.expire(at: start + .seconds(40)), 1)
        XCTAssertEqual(retained.count, 0)
    }

    func testANewerRunReplacesTheOldOneAndItsTime() {
        let start = ContinuousClock.now
        var retained = RetainedReplies(keep: .seconds(30))
        let reply = generation("a")
        retained.retain(reply, lastEventID: 7, at: start)
        retained.remove("a")
        XCTAssertNil(retained.lastEventID(for: "a"), "a continue forgets the previous run")
        retained.retain(reply, lastEventID: 12, at: start + .seconds(20))
        // The first run's ticker entry fires at 30 s: the newer run is not released by it.
        XCTAssertEqual(retained.expire(at: start + .seconds(30)), 0)
        XCTAssertEqual(retained.lastEventID(for: "a"), 12)
    }
}
