import Foundation
import ParleyTestSupport
import XCTest

/// A `kill -9` while a tool runs: after the restart the reply is `interrupted` with the call `cancelled`,
/// and continue tells the model the call was cancelled, then goes on.
final class ToolCrashTests: XCTestCase {
    private func toolStatus(_ message: [String: Any]) -> String? {
        (message["parts"] as? [[String: Any]])?.first { $0["type"] as? String == "tool_call" }?["status"] as? String
    }

    func testAKillDuringAToolRunLeavesTheReplyInterruptedAndTheCallCancelled() async throws {
        let directory = TestFiles.directory("parley-tool-crash")
        let tools = try MCPToolServer(directory: directory)
        let upstream = try FakeUpstream()
        defer { upstream.shutdown() }
        upstream.enqueue(ToolStreams.round(text: ["Sleeping."], calls: [("s", "free__slow", ["{\"seconds\": 30, \"quiet\": true}"])]))
        let settings = ["PARLEY_PORT": "0", "PARLEY_DB": directory.appendingPathComponent("parley.db").path,
                        "PARLEY_PUBLIC": TestParley.repositoryRoot.appendingPathComponent("Public").path,
                        "PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1", "PARLEY_OPENAI_MODELS": "fake",
                        "PARLEY_FLUSH_INTERVAL_MS": "20"].merging(tools.settings) { $1 }
        var parley = try ParleyProcess(environment: settings)
        let ready = try await Deadline(.seconds(30)).wait(every: .milliseconds(50)) {
            let items = try await parley.call("GET", "/api/tools")["items"] as? [[String: Any]] ?? []
            return items.contains { $0["id"] as? String == "free/slow" && $0["available"] as? Bool == true }
        }
        XCTAssertTrue(ready, "the MCP server came up")
        let conversation = try await parley.call("POST", "/api/conversations",
                                          ["model": "openai:fake", "tools": ["free/slow"]])
        let conversationID = try XCTUnwrap(conversation["id"] as? String)
        let turn = try await parley.call("POST", "/api/conversations/\(conversationID)/messages", ["content": "go"])
        let assistant = try XCTUnwrap((turn["assistant_message"] as? [String: Any])?["id"] as? String)
        let running = try await Deadline(.seconds(20)).wait(every: .milliseconds(20)) {
            self.toolStatus(try await parley.call("GET", "/api/messages/\(assistant)")) == "running"
        }
        XCTAssertTrue(running, "the running call was stored by a progress flush")
        parley.kill()

        upstream.enqueue(UpstreamStreams.complete(["Woken up."]))
        parley = try ParleyProcess(environment: settings)
        let after = try await parley.call("GET", "/api/messages/\(assistant)")
        XCTAssertEqual(after["status"] as? String, "interrupted")
        XCTAssertEqual(toolStatus(after), "cancelled")
        XCTAssertEqual(after["content"] as? String, "Sleeping.")
        _ = try await parley.call("POST", "/api/messages/\(assistant)/continue")
        let done = try await Deadline(.seconds(20)).wait(every: .milliseconds(20)) {
            try await parley.call("GET", "/api/messages/\(assistant)")["status"] as? String == "complete"
        }
        XCTAssertTrue(done)
        let told = ToolStreams.toolMessages(upstream.requests.last!).compactMap { $0["content"] as? String }
        XCTAssertEqual(told.count, 1)
        XCTAssertTrue(told.first?.contains("cancelled") ?? false, "\(told)")
        parley.kill(SIGTERM)
    }
}
