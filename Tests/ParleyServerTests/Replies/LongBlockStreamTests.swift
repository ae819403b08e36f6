import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// Issue 11: what an html-mode client is sent for a reply made of one long block is linear in the
/// reply. The open block grows by `tail_append`, never re-sent whole per frame, so the events add
/// up to at most 4× the final HTML plus a small overhead per event, for a client attached from the
/// start and for one that leaves midway and comes back (snapshot, then the rest).
///
/// The worst case for the old protocol: frame interval 0 and 12-byte deltas, one frame per delta
/// (a 2,000-line code block cost 170 MB there before).
final class LongBlockStreamTests: UpstreamTestCase {
    override var settings: [String: String] { ["PARLEY_FRAME_INTERVAL_MS": "0"] }

    /// SSE framing per event: `id: <16 digits>`, `event: tail_append`, `data: {"text":…}` and the
    /// blank line come to about 60 bytes; pings add a few more.
    static let bytesPerEvent = 100

    func testA2000LineCodeBlockIsSentInLinearBytes() async throws {
        let (whole, resumed) = try await stream(LongReplies.codeBlock(lines: 2000))
        XCTAssertGreaterThan(whole.events.filter { $0.type == "tail_append" }.count, 1000, "the open fence grows by appends")
        XCTAssertEqual(resumed.count, 2)
    }

    func testA1000ItemListIsSentInLinearBytes() async throws {
        _ = try await stream(LongReplies.list(items: 1000))
    }

    func testA500RowTableIsSentInLinearBytes() async throws {
        _ = try await stream(LongReplies.table(rows: 500))
    }

    func testProseIsSentInLinearBytes() async throws {
        _ = try await stream(LongReplies.prose(bytes: 60_000))
    }

    /// Streams `reply` in 12-byte deltas to two html-mode clients: one attached from the start, one
    /// that leaves when half the reply was sent and reconnects without an id (a snapshot, then the
    /// rest). Checks both rebuild the stored HTML and stay within the byte bound.
    private func stream(_ reply: String, file: StaticString = #filePath, line: UInt = #line) async throws
        -> (whole: StreamRead, resumed: [StreamRead]) {
        let deltas = LongReplies.pieces(of: reply, bytes: 12)
        let attached = FakeUpstream.Gate()
        let middle = FakeUpstream.Gate()
        var script = FakeUpstream.Script.eventStream(writes: deltas.map(UpstreamStreams.chunk) + [UpstreamStreams.finish()])
        script.steps.insert(.wait(middle), at: deltas.count / 2)
        script.steps.insert(.wait(attached), at: 0)
        upstream.enqueue(script)
        let conversation = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(conversation, "go")

        let url = parley.base + "/api/messages/\(assistant)/stream"
        async let wholeRead = Self.read(url, attached: attached)
        // Leaves once the upstream has sent half the reply (it then waits for the second client).
        let firstHalf = try await Self.read(url, attached: attached, until: { _ in middle.isReached })
        XCTAssertNil(firstHalf.done, "left midway", file: file, line: line)
        let rest = try await Self.read(url, attached: middle)
        let whole = try await wholeRead

        let stored = try await parley.finished(assistant)
        let html = try XCTUnwrap(stored["html"] as? String)
        XCTAssertEqual(stored["content"] as? String, reply, file: file, line: line)
        XCTAssertEqual(rest.events.first?.type, "snapshot", "the reconnect starts with a snapshot", file: file, line: line)

        let resumed = [firstHalf, rest]
        for (name, reads) in [("attached from the start", [whole]), ("reconnected midway", resumed)] {
            let combined = StreamRead(status: 200, headers: [:], events: reads.flatMap(\.events), raw: "")
            XCTAssertEqual(combined.page.blocks.joined(), html, "\(name): the page rebuilds the stored HTML",
                           file: file, line: line)
            XCTAssertEqual(combined.page.tail, "", name, file: file, line: line)
            let bytes = reads.reduce(0) { $0 + $1.raw.utf8.count }
            let events = combined.events.count
            let bound = 4 * html.utf8.count + Self.bytesPerEvent * events
            print("[bytes] \(name): \(reply.utf8.count) B reply, \(html.utf8.count) B HTML, \(bytes) B in \(events) events "
                  + "(\(String(format: "%.2f", Double(bytes) / Double(html.utf8.count)))× the HTML; bound \(bound) B)")
            XCTAssertLessThanOrEqual(bytes, bound, "\(name): bytes sent", file: file, line: line)
        }
        return (whole, resumed)
    }

    /// One html-mode connection until `done` (or `until`), decoded once at the end: these streams
    /// have thousands of events, and `TestParley.events` decodes all bytes so far on every read.
    private static func read(_ url: String, attached: FakeUpstream.Gate,
                             until: @escaping @Sendable ([UInt8]) -> Bool = { _ in false }) async throws -> StreamRead {
        try await Blocking.run {
            let done = Array("event: done\n".utf8)
            let response = try TestHTTPClient().stream(url, until: { bytes in
                if !bytes.isEmpty { attached.open() }
                // `done` is the last event, and a short one: stop once it has arrived whole (its blank
                // line too; a big final batch can reach the client in several reads).
                if until(bytes) { return true }
                let end = bytes.suffix(4096)
                guard let start = end.indices.last(where: { end[$0...].starts(with: done) }) else { return false }
                let rest = end[start...]
                return rest.indices.contains { rest[$0...].starts(with: [10, 10]) }
            }, timeout: 120)
            var decoder = SSEDecoder()
            let events = try decoder.decode(response.body)
            return StreamRead(status: response.status, headers: response.headers, events: events, raw: response.text)
        }
    }
}
