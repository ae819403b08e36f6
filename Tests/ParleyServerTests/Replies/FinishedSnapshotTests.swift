import Foundation
import ParleyTestSupport
import XCTest

/// The snapshot of a finished reply is the same whether the generation is still in memory, was
/// released after PARLEY_RETAIN_FINISHED_SECONDS, or is read after a restart (it used to lose the
/// reasoning once built from the store).
final class FinishedSnapshotTests: UpstreamTestCase {
    override var settings: [String: String] { ["PARLEY_RETAIN_FINISHED_SECONDS": "1"] }

    let thoughts = ["Let me think", " about 日本 👍🏽.", "\nDone."]
    let answer = ["# Title\n\n", "Some *text*", ".\n"]

    private func finishedReply() async throws -> (String, StreamRead) {
        let writes = thoughts.map { UpstreamStreams.reasoning($0) } + answer.map(UpstreamStreams.chunk)
            + [UpstreamStreams.finish()]
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(.eventStream(writes: writes), start: attached))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        let live = try await parley.events(assistant, mode: "text", attached: attached)
        XCTAssertEqual(live.done?["status"] as? String, "complete")
        return (assistant, live)
    }

    private func assertSnapshot(_ read: StreamRead, _ context: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(read.events.map(\.type), ["snapshot", "done"], context, file: file, line: line)
        guard let snapshot = read.events.first.map(read.exact) else { return }
        XCTAssertEqual(snapshot["reasoning"]?.string, thoughts.joined(), context, file: file, line: line)
        XCTAssertEqual(snapshot["content"]?.string, answer.joined(), context, file: file, line: line)
        XCTAssertEqual(snapshot["status"]?.string, "complete", context, file: file, line: line)
        XCTAssertEqual(snapshot["tail"]?.string, "", context, file: file, line: line)
    }

    func testTheSnapshotOfAReleasedReplyCarriesItsReasoning() async throws {
        let (assistant, live) = try await finishedReply()
        XCTAssertEqual(live.exactReasoning, thoughts.joined())
        let retained = try await parley.events(assistant, mode: "text")
        assertSnapshot(retained, "while the generation is retained")
        let retainedBlocks = retained.exact(retained.events[0])["blocks"]

        try await Task.sleep(for: .seconds(2))  // past PARLEY_RETAIN_FINISHED_SECONDS=1
        for mode in ["text", "html"] {
            let released = try await parley.events(assistant, mode: mode)
            assertSnapshot(released, "from the store, \(mode) mode")
            XCTAssertEqual(released.exact(released.events[0])["blocks"], retainedBlocks, "same blocks")
        }

        await parley.stop()
        parley = try TestParley(upstream: upstream, settings.merging(["PARLEY_DB": parley.directory
            .appendingPathComponent("parley.db").path]) { $1 })
        assertSnapshot(try await parley.events(assistant, mode: "text"), "after a restart")
    }
}
