import Foundation
import ParleyStore
import XCTest

final class PerformanceTests: StoreTestCase {
    /// Budget for reading a 2,000-message branch with sibling info: a guard against quadratic work,
    /// generous for a loaded 2-core CI machine. The measured figure is printed.
    static let currentBranchBudget: Duration = .milliseconds(500)

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
        var branch: [BranchMessage] = []
        for _ in 0..<5 {
            let start = clock.now
            branch = try store.currentBranch(conversationID: conversation.id)
            timings.append(clock.now - start)
        }
        timings.sort()
        let median = timings[timings.count / 2]
        print("currentBranch of \(branch.count) messages: median \(median), min \(timings[0]), max \(timings[timings.count - 1])")

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
