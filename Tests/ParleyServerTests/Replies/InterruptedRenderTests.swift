import Foundation
import ParleyStore
import ParleyTestSupport
import XCTest

/// A reply cut by a crash is shown like any finished reply: rendered HTML, not raw Markdown.
final class InterruptedRenderTests: XCTestCase {
    static let markdown = "# Cut short\n\nSome **bold** text and a list:\n\n- one\n- two\n"

    private func settings(_ directory: URL, _ extra: [String: String] = [:]) -> [String: String] {
        ["PARLEY_PORT": "0", "PARLEY_DB": directory.appendingPathComponent("parley.db").path,
         "PARLEY_PUBLIC": TestParley.repositoryRoot.appendingPathComponent("Public").path].merging(extra) { $1 }
    }

    private func assertRendered(_ message: [String: Any], _ context: String,
                                file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(message["status"] as? String, "interrupted", context, file: file, line: line)
        XCTAssertEqual(message["content"] as? String, Self.markdown, context, file: file, line: line)
        let html = message["html"] as? String ?? ""
        XCTAssertTrue(html.contains("<h1>Cut short</h1>") && html.contains("<strong>bold</strong>")
                      && html.contains("<li>two</li>"), "\(context): html is \(html.debugDescription)",
                      file: file, line: line)
    }

    func testAReplyCutByKillNineIsRenderedAfterTheRestart() async throws {
        let directory = TestFiles.directory("parley-interrupted")
        let upstream = try FakeUpstream()
        defer { upstream.shutdown() }
        upstream.enqueue(UpstreamStreams.stalling(after: [Self.markdown]))
        let provider = ["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1", "PARLEY_OPENAI_MODELS": "fake",
                        "PARLEY_FLUSH_INTERVAL_MS": "20"]
        var parley = try ParleyProcess(environment: settings(directory, provider))
        let conversation = try await parley.call("POST", "/api/conversations", ["model": "openai:fake"])
        let conversationID = try XCTUnwrap(conversation["id"] as? String)
        let turn = try await parley.call("POST", "/api/conversations/\(conversationID)/messages", ["content": "go"])
        let assistant = try XCTUnwrap((turn["assistant_message"] as? [String: Any])?["id"] as? String)
        // Kill only once the whole text is stored by a progress flush.
        let deadline = ContinuousClock.now + .seconds(20)
        var stored = ""
        while stored != Self.markdown, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            stored = try await parley.call("GET", "/api/messages/\(assistant)")["content"] as? String ?? ""
        }
        XCTAssertEqual(stored, Self.markdown, "the progress flush stored the text")
        parley.kill()

        parley = try ParleyProcess(environment: settings(directory, provider))
        assertRendered(try await parley.call("GET", "/api/messages/\(assistant)"), "the message")
        let branch = try await parley.call("GET", "/api/conversations/\(conversationID)")
        let last = try XCTUnwrap((branch["messages"] as? [[String: Any]])?.last)
        assertRendered(last, "the conversation's branch")
        parley.kill(SIGTERM)
    }

    /// A database written before this fix holds interrupted replies without HTML: they are rendered too.
    func testInterruptedRepliesStoredWithoutHTMLAreRenderedAtStart() async throws {
        let directory = TestFiles.directory("parley-interrupted")
        let path = directory.appendingPathComponent("parley.db").path
        let assistantID: String
        do {
            let store = try Store(path: path)
            let conversation = try store.createConversation(model: "demo")
            let turn = try store.appendTurn(conversationID: conversation.id, placement: .afterCurrentLeaf,
                                            userContent: "go", model: "demo")
            _ = try store.finishMessage(id: turn.assistant.id, content: Self.markdown, status: .interrupted)
            assistantID = turn.assistant.id
        }
        let parley = try TestParley(directory: directory)
        let message = try await parley.message(assistantID)
        assertRendered(message, "an interrupted reply stored without HTML")
        await parley.stop()
    }
}
