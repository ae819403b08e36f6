import Foundation
@testable import ParleyConversations
@testable import ParleyServer
import ParleyTestSupport
import XCTest

/// Issue 12's titles: after the first answer a conversation is named by its model (one small request),
/// or by the first words of the question when the model is the demo or the request fails; a title set
/// by hand is never replaced, and later turns never rename.
final class ConversationTitleTests: UpstreamTestCase {
    override var settings: [String: String] { ["PARLEY_TITLES": "model"] }
    static let question = "What should I see in Paris during three days?"

    /// The conversation's title once it is no longer the default, or the default after `timeout`.
    private func title(of id: String, after timeout: TimeInterval = 15) async throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let reply = try await parley.call("GET", "/api/conversations/\(id)")
            let title = reply.json["title"] as? String ?? ""
            if title != "New conversation" || Date() > deadline { return title }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    private func titleRequests() -> [String] {
        upstream.requests.map { String(decoding: $0.body, as: UTF8.self) }
            .filter { $0.contains("Write a title for this conversation") }
    }

    func testTheModelNamesTheConversationAfterItsFirstAnswer() async throws {
        upstream.enqueue(UpstreamStreams.complete(["See the Louvre", " and Montmartre."]),
                         UpstreamStreams.complete(["\"Three days", " in Paris.\"\n", "extra line"]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, Self.question)
        _ = try await parley.finished(assistant)
        let named = try await title(of: id)
        XCTAssertEqual(named, "Three days in Paris", "quotes, the period and later lines are dropped")
        let asked = try XCTUnwrap(titleRequests().first)
        XCTAssertTrue(asked.contains("\"max_tokens\":24"), asked)
        XCTAssertTrue(asked.contains("three days?") && asked.contains("Montmartre"), "question and answer are sent: \(asked)")

        // A second turn does not rename.
        upstream.enqueue(UpstreamStreams.complete(["Sure."]))
        let (_, second) = try await parley.send(id, "And on a rainy day?")
        _ = try await parley.finished(second)
        await parley.app.titles.settled()
        XCTAssertEqual(titleRequests().count, 1)
        let kept = try await title(of: id)
        XCTAssertEqual(kept, "Three days in Paris")
    }

    func testAFailedTitleRequestGivesTheFirstWordsOfTheQuestion() async throws {
        // Only the reply is scripted: the title request is answered 500.
        upstream.enqueue(UpstreamStreams.complete(["See the Louvre."]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, Self.question)
        _ = try await parley.finished(assistant)
        let named = try await title(of: id)
        XCTAssertEqual(named, "What should I see in Paris")
    }

    func testATitleSetByHandWhileTheReplyStreamsIsKept() async throws {
        let finish = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(["See", " the Louvre."]), finish: finish),
                         UpstreamStreams.complete(["Paris trip"]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, Self.question)
        let renamed = try await parley.call("PATCH", "/api/conversations/\(id)", json: ["title": "Mine"])
        XCTAssertEqual(renamed.status, 200, renamed.text)
        finish.open()
        _ = try await parley.finished(assistant)
        // The title request is still made (the reply had ended); its answer must not replace "Mine".
        await parley.app.titles.settled()
        XCTAssertEqual(titleRequests().count, 1)
        let kept = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(kept.json["title"] as? String, "Mine")
    }

    func testAConversationCreatedWithATitleIsNeverRenamed() async throws {
        upstream.enqueue(UpstreamStreams.complete(["Sure."]))
        let id = try await parley.conversation(["model": "openai:fake", "title": "Planning"])
        let (_, assistant) = try await parley.send(id, Self.question)
        _ = try await parley.finished(assistant)
        await parley.app.titles.settled()
        XCTAssertTrue(titleRequests().isEmpty)
        let kept = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(kept.json["title"] as? String, "Planning")
    }

    func testTheDemoModelGivesTheFirstWordsWithoutARequest() async throws {
        let demo = try startParley(["PARLEY_TITLES": "model"])
        let id = try await demo.conversation()
        let (_, assistant) = try await demo.send(id, "Explain   streaming Markdown, please: how does it work?")
        _ = try await demo.finished(assistant)
        let deadline = Date().addingTimeInterval(15)
        var title = ""
        while Date() < deadline {
            title = try await demo.call("GET", "/api/conversations/\(id)").json["title"] as? String ?? ""
            if title != "New conversation" { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        XCTAssertEqual(title, "Explain streaming Markdown, please: how does")
    }

    func testWordsTitlesNeverAskTheModelAndOffKeepsTheDefault() async throws {
        for (source, expected) in [("words", "What should I see in Paris"), ("off", "New conversation")] {
            let fake = try startUpstream()
            let other = try startParley(upstream: fake, ["PARLEY_TITLES": source])
            fake.enqueue(UpstreamStreams.complete(["See the Louvre."]), UpstreamStreams.complete(["Paris trip"]))
            let id = try await other.conversation(["model": "openai:fake"])
            let (_, assistant) = try await other.send(id, Self.question)
            _ = try await other.finished(assistant)
            await other.app.titles.settled()
            let stored = try await other.call("GET", "/api/conversations/\(id)")
            XCTAssertEqual(stored.json["title"] as? String, expected, source)
            XCTAssertEqual(fake.requests.count, 1, "\(source): only the reply was asked for")
        }
        XCTAssertThrowsError(try ParleyConfiguration(environment: ["PARLEY_TITLES": "sometimes"], arguments: []))
    }

    func testCleaningAModelsAnswer() {
        XCTAssertEqual(ConversationTitler.clean("Title: **Trip to Paris**.\nmore", maxCharacters: 60), "Trip to Paris")
        XCTAssertEqual(ConversationTitler.clean("\n\n# “Café  au lait”\n", maxCharacters: 60), "Café au lait")
        XCTAssertEqual(ConversationTitler.clean("   ", maxCharacters: 60), "")
        XCTAssertEqual(ConversationTitler.cut("one two three four five", maxCharacters: 12), "one two")
        XCTAssertEqual(ConversationTitler.cut("東京の天気について教えてください", maxCharacters: 5), "東京の天気")
        // One grapheme cluster of 450,000 combining marks is one character, but not a 900 KB title.
        let monster = "zq" + String(repeating: "\u{0301}", count: 450_000) + " more words"
        let title = ConversationTitler.firstWords(of: monster, maxCharacters: 60)
        XCTAssertLessThanOrEqual(title.utf8.count, 180)
        XCTAssertTrue(title.unicodeScalars.starts(with: "zq\u{0301}".unicodeScalars))
        XCTAssertEqual(ConversationTitler.firstWords(of: "Why?", maxCharacters: 60), "Why")
    }
}
