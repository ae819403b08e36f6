import Foundation
@testable import ParleyGeneration
import ParleyProviders
import ParleyStore
import XCTest

/// The rules of the history sent upstream: the system prompt first and outside the budget, the
/// oldest turns dropped first, the newest user turn always kept, never an assistant turn first.
final class ContextBuilderTests: XCTestCase {
    /// A branch root-to-leaf from alternating turns, the first one a user turn.
    private func branch(_ contents: [String]) -> [Message] {
        contents.enumerated().map { index, content in
            Message(id: "m\(index)", conversationID: "c", parentID: index == 0 ? nil : "m\(index - 1)",
                    role: index % 2 == 0 ? .user : .assistant, content: content, status: .complete,
                    finishReason: nil, model: nil, usage: nil, errorCode: nil, errorMessage: nil, html: nil,
                    createdAt: Date(), updatedAt: Date())
        }
    }

    private func contents(_ messages: [ChatMessage]) -> [String] { messages.map(\.content) }

    func testEverythingFitsAndTheSystemPromptComesFirst() throws {
        let sent = try ContextBuilder(budget: 1000).messages(systemPrompt: "Be brief.", branch: branch(["q1", "a1", "q2"]))
        XCTAssertEqual(sent.map(\.role), [.system, .user, .assistant, .user])
        XCTAssertEqual(contents(sent), ["Be brief.", "q1", "a1", "q2"])
    }

    func testTheOldestTurnsAreDroppedFirst() throws {
        // Five turns of 10 characters; a budget of 30 keeps the newest three and drops the oldest two.
        let turns = ["question 1", "answer   1", "question 2", "answer   2", "question 3"]
        let sent = try ContextBuilder(budget: 30).messages(systemPrompt: nil, branch: branch(turns))
        XCTAssertEqual(contents(sent), ["question 2", "answer   2", "question 3"])
        XCTAssertEqual(sent.map(\.role), [.user, .assistant, .user])
    }

    func testTheBudgetIsExactlyFilledFromTheNewestTurn() throws {
        let turns = ["aaaa", "bbbb", "cccc", "dddd", "eeee"]
        // 12 characters: the newest three fit exactly, the fourth would not.
        let sent = try ContextBuilder(budget: 12).messages(systemPrompt: nil, branch: branch(turns))
        XCTAssertEqual(contents(sent), ["cccc", "dddd", "eeee"])
        let oneLess = try ContextBuilder(budget: 11).messages(systemPrompt: nil, branch: branch(turns))
        XCTAssertEqual(contents(oneLess), ["eeee"], "dddd would make it start with an assistant turn")
    }

    func testTheNewestUserTurnIsKeptEvenAloneOverTheBudget() throws {
        let long = String(repeating: "x", count: 500)
        let sent = try ContextBuilder(budget: 10).messages(systemPrompt: "sys", branch: branch(["old", "reply", long]))
        XCTAssertEqual(contents(sent), ["sys", long])
        XCTAssertEqual(sent.map(\.role), [.system, .user])
    }

    func testTheSystemPromptIsOutsideTheBudget() throws {
        let system = String(repeating: "s", count: 1000)
        let turns = ["q1", "a1", "q2"]
        // The turns alone fit in 6 characters: a long system prompt does not push any of them out.
        let sent = try ContextBuilder(budget: 6).messages(systemPrompt: system, branch: branch(turns))
        XCTAssertEqual(contents(sent), [system] + turns)
        let none = try ContextBuilder(budget: 6).messages(systemPrompt: "", branch: branch(turns))
        XCTAssertEqual(contents(none), turns, "an empty system prompt sends no system turn")
    }

    func testTheHistoryNeverStartsWithAnAssistantTurn() throws {
        let turns = ["a long first question", "a1", "q2"]
        // The budget keeps "a1" and "q2" (4 characters); a1 is then dropped as a leading assistant turn.
        let sent = try ContextBuilder(budget: 4).messages(systemPrompt: "sys", branch: branch(turns))
        XCTAssertEqual(sent.map(\.role), [.system, .user])
        XCTAssertEqual(contents(sent), ["sys", "q2"])
    }

    func testEmptyTurnsAreLeftOut() throws {
        // A reply stopped before its first token is stored empty; it is not sent.
        let sent = try ContextBuilder(budget: 100).messages(systemPrompt: nil, branch: branch(["q1", "", "q2"]))
        XCTAssertEqual(contents(sent), ["q1", "q2"])
    }

    func testTheBudgetCountsCharactersNotBytes() throws {
        // "日本語の質問" is 6 characters and 18 UTF-8 bytes.
        let turns = ["日本語の質問", "答え", "日本語の質問"]
        let sent = try ContextBuilder(budget: 14).messages(systemPrompt: nil, branch: branch(turns))
        XCTAssertEqual(contents(sent), turns)
    }
}
