import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// A generation runs server-side: clients come and go, reconnect with Last-Event-ID and always end
/// with exactly the upstream text, no gap and no duplicate.
final class StreamResumeTests: UpstreamTestCase {
    override var settings: [String: String] { ["PARLEY_FRAME_INTERVAL_MS": "5"] }
    let tokens = (0..<150).map { index in ["α", "β ", "日本 ", "👍🏽", "w\(index) ", "\n\n", "- item\n"][index % 7] }

    func testTheGenerationGoesOnWhenTheOnlyClientLeaves() async throws {
        // Held until the client is attached: one arriving after the end would get snapshot + done.
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(tokens, delayMilliseconds: 2), start: attached))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        let partial = try await parley.events(assistant, mode: "text", attached: attached, until: { $0.count > 3 })
        XCTAssertNil(partial.done, "the client left before the end")
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(stored["status"] as? String, "complete")
        XCTAssertEqual(stored["content"] as? String, tokens.joined())
    }

    func testManyReconnectsWithLastEventIDLoseAndRepeatNothing() async throws {
        for mode in ["text", "html"] {
            // The stream starts once the first client is attached and its end (the finish, hence
            // `done`) waits for the sixth connection: a slow client on a loaded machine still makes
            // at least six, whatever the pace of the tokens.
            let attached = FakeUpstream.Gate()
            let finish = FakeUpstream.Gate()
            upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(tokens, delayMilliseconds: 3),
                                                   start: attached, finish: finish))
            let id = try await parley.conversation(["model": "openai:fake"])
            let (_, assistant) = try await parley.send(id, "go")
            var all: [SSEEvent] = []
            var lastID: Int64?
            var connections = 0
            // One limit for the whole loop: a server that never sends `done` fails here, not after
            // hundreds of reads.
            let deadline = Deadline(.seconds(60))
            while all.last?.type != "done" {
                guard !deadline.hasPassed else {
                    XCTFail("\(mode): no done after \(connections) connections in \(deadline.limit)")
                    break
                }
                connections += 1
                if connections == 6 { finish.open() }
                let take = connections % 4 + 1
                // Before the sixth, deliberately short reads: a connection made after every token has
                // been read waits for the finish, which only the sixth lets go (the end of the window
                // is one more reconnect, which is what this test is about). From the sixth on, every
                // read must end with `take` events or `done`, or it fails.
                let read = connections < 6
                    ? try await parley.events(assistant, readingFor: 2, mode: mode == "text" ? "text" : nil,
                                              lastEventID: lastID, attached: attached, until: { $0.count >= take })
                    : try await parley.events(assistant, mode: mode == "text" ? "text" : nil, lastEventID: lastID,
                                              attached: attached, until: { $0.count >= take },
                                              timeout: deadline.seconds(atMost: 20))
                let fresh = read.events
                if let lastID, let first = fresh.first {
                    XCTAssertNotEqual(first.type, "snapshot", "a resumed connection is replayed exactly")
                    XCTAssertGreaterThan(Int64(first.id) ?? 0, lastID)
                }
                let ids = fresh.compactMap { Int64($0.id) }
                XCTAssertEqual(ids, ids.sorted(), "ids grow")
                XCTAssertEqual(Set(ids).count, ids.count, "no duplicate")
                all += fresh
                lastID = all.last.flatMap { Int64($0.id) } ?? lastID
            }
            XCTAssertGreaterThan(connections, 5)
            let combined = StreamRead(status: 200, headers: [:], events: all, raw: "")
            let stored = try await parley.finished(assistant)
            if mode == "text" {
                XCTAssertEqual(combined.text, tokens.joined(), "text rebuilt from \(connections) connections")
            } else {
                XCTAssertEqual(combined.page.blocks.joined(), stored["html"] as? String,
                               "page rebuilt from \(connections) connections")
                XCTAssertEqual(combined.page.tail, "")
            }
            print("\(mode): \(connections) connections, \(all.count) events")
        }
    }

    func testAReconnectFromBeforeTheLogStartsGetsASnapshot() async throws {
        upstream.enqueue(UpstreamStreams.complete(["a", "b"]))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        let read = try await parley.events(assistant, mode: "text", lastEventID: 1)
        XCTAssertEqual(read.events.first?.type, "snapshot")
        XCTAssertEqual(read.text, "ab")
    }

    func testAMalformedLastEventIDIs400() async throws {
        let id = try await parley.conversation(["model": "demo"])
        let (_, assistant) = try await parley.send(id, "go")
        let reply = try await parley.call("GET", "/api/messages/\(assistant)/stream",
                                          headers: [("Last-Event-ID", "yesterday")])
        XCTAssertEqual(reply.status, 400)
    }
}
