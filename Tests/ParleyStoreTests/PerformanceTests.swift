import Foundation
import ParleyStore
import XCTest

final class PerformanceTests: StoreTestCase {
    /// Budget for reading a 2,000-message branch with sibling info: a guard against quadratic work.
    /// Checked on the CPU time of the reading thread (the read runs on it, synchronously), which
    /// other processes on a loaded CI machine do not inflate the way they stretch wall time. The
    /// measured figures are printed.
    static let currentBranchBudget: Duration = .milliseconds(500)

    /// CPU time (user + system) of the calling thread.
    private static func threadCPUTime() -> Duration {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
    }

    func testCurrentBranchOfTwoThousandMessagesIsFast() throws {
        let store = try makeStore()
        let conversation = try store.createConversation()
        var firstAssistant: String?
        for index in 0..<1000 {
            let turn = try store.appendTurn(
                conversationID: conversation.id, parentID: nil,
                userContent: "question \(index) " + String(repeating: "x", count: 200), model: nil)
            _ = try store.finishMessage(
                id: turn.assistant.id, content: "answer \(index) " + String(repeating: "y", count: 600),
                status: .complete)
            if index == 0 { firstAssistant = turn.assistant.id }
        }
        // Some siblings along the way, so the sibling query has work to do.
        let firstAssistantID = try XCTUnwrap(firstAssistant)
        _ = try store.createSibling(ofAssistant: firstAssistantID, model: nil)
        _ = try store.setCurrent(conversationID: conversation.id, messageID: firstAssistantID)

        let clock = ContinuousClock()
        var timings: [Duration] = []
        var wall: [Duration] = []
        var branch: [BranchMessage] = []
        for _ in 0..<5 {
            let start = clock.now
            let cpuStart = Self.threadCPUTime()
            branch = try store.currentBranch(conversationID: conversation.id)
            timings.append(Self.threadCPUTime() - cpuStart)
            wall.append(clock.now - start)
        }
        timings.sort()
        wall.sort()
        let median = timings[timings.count / 2]
        print("currentBranch of \(branch.count) messages: CPU median \(median), min \(timings[0]), max \(timings[timings.count - 1]); "
            + "wall median \(wall[wall.count / 2])")

        XCTAssertEqual(branch.count, 2000)
        XCTAssertEqual(branch[1].siblings.count, 2)
        XCTAssertEqual(branch[1].siblings.index, 0)
        XCTAssertEqual(branch.last?.message.content.hasPrefix("answer 999"), true)
        XCTAssertLessThan(median, Self.currentBranchBudget)

        let contextStart = clock.now
        let context = try store.contextPath(leafID: try XCTUnwrap(branch.last?.message.id))
        print("contextPath of \(context.count) messages: \(clock.now - contextStart)")
        XCTAssertEqual(context.count, 2000)
    }
}
