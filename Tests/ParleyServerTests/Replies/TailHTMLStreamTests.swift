import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// Issue 18, item 3 on the wire: html mode sends the open tail rendered provisionally as `tail_html`,
/// with no `id:` line (never replayed), the snapshot carries the current one, and text mode is as before.
final class TailHTMLStreamTests: UpstreamTestCase {
    private let tokens = ["## Title\n\n", "Some **bo", "ld** text", " and `code`.\n\n", "- one\n", "- two"]

    func testHTMLModeSendsTheProvisionalTailWithoutAnID() async throws {
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(tokens, delayMilliseconds: 40), start: attached))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "markdown")
        let read = try await parley.events(assistant, attached: attached)
        let shown = read.events.filter { $0.type == "tail_html" }.map { read.data($0) }
        XCTAssertGreaterThanOrEqual(shown.count, 3, "\(read.events.map(\.type))")
        // Rebuilt as the page does: each keeps the first `keep` UTF-16 units of the one before.
        var html = ""
        var seen: [String] = []
        for fields in shown {
            let keep = fields["keep"] as? Int ?? 0
            html = (String(html.utf16.prefix(keep)) ?? "") + (fields["html"] as? String ?? "")
            seen.append(html)
        }
        XCTAssertTrue(seen.contains("<p>Some</p>\n"), "the open `**bo` is held back: \(seen)")
        XCTAssertTrue(seen.contains { $0.contains("<strong>bold</strong>") }, "\(seen)")
        XCTAssertTrue(seen.contains("<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n"), "\(seen)")
        XCTAssertFalse(seen.contains { $0.contains("**") }, "\(seen)")
        // No `id:` line before a tail_html: the raw bytes.
        let frames = read.raw.components(separatedBy: "\n\n")
        for frame in frames where frame.contains("event: tail_html") {
            XCTAssertFalse(frame.contains("id:"), frame)
        }
        let stored = try await parley.finished(assistant)
        XCTAssertEqual(read.page.blocks.joined(), stored["html"] as? String, "the committed blocks are unchanged")
    }

    func testTheSnapshotCarriesTheCurrentProvisionalTailAndTextModeHasNone() async throws {
        let finish = FakeUpstream.Gate()
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(["Intro.\n\n", "Some *it", "alic* so far"]),
                                               start: attached, finish: finish))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        attached.open()
        let first = try await parley.events(assistant, until: { events in
            events.contains { $0.type == "tail_html" && $0.data.contains("italic") }
        })
        XCTAssertNil(first.done)
        // A second tab attaching now gets the current provisional tail in its snapshot.
        let late = try await parley.events(assistant, until: { $0.count >= 1 })
        let snapshot = late.data(try XCTUnwrap(late.events.first))
        XCTAssertEqual(late.events.first?.type, "snapshot")
        XCTAssertEqual(snapshot["tail_html"] as? String, "<p>Some <em>italic</em> so far</p>\n")
        // A resume from the last id replays exactly, then the current tail_html.
        let resumed = try await parley.events(assistant, lastEventID: first.lastID, until: { $0.count >= 1 })
        XCTAssertEqual(resumed.events.first?.type, "tail_html")
        XCTAssertEqual(resumed.data(try XCTUnwrap(resumed.events.first))["html"] as? String,
                       "<p>Some <em>italic</em> so far</p>\n")
        let text = try await parley.events(assistant, mode: "text", until: { $0.count >= 1 })
        let textSnapshot = text.data(try XCTUnwrap(text.events.first))
        XCTAssertNil(textSnapshot["tail_html"], "text mode is unchanged")
        finish.open()
        let rest = try await parley.events(assistant, mode: "text")
        XCTAssertFalse(rest.events.contains { $0.type == "tail_html" })
        _ = try await parley.finished(assistant)
    }

    /// A throttled provisional render is owed, not dropped: here one paragraph grows past 1 KiB, where
    /// it is rendered again only after 25% growth (or 1 s), and the model pauses before that; the
    /// reply's timer still sends the owed render, so no text stays unshown while the model is silent.
    func testAHeldBackRenderIsSentWhenTheModelPauses() async throws {
        let finish = FakeUpstream.Gate()
        let attached = FakeUpstream.Gate()
        let words = (0..<40).map { "piece \(String(format: "%02d", $0)) of one long paragraph; " } + ["omega"]
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(words, delayMilliseconds: 30),
                                               start: attached, finish: finish))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        let read = try await parley.events(assistant, attached: attached, until: { events in
            events.contains { $0.type == "tail_html" && $0.data.contains("omega") }
        })
        XCTAssertNil(read.done, "the model is still paused")
        var html = ""
        for fields in read.events.filter({ $0.type == "tail_html" }).map({ read.data($0) }) {
            let keep = fields["keep"] as? Int ?? 0
            html = (String(html.utf16.prefix(keep)) ?? "") + (fields["html"] as? String ?? "")
        }
        XCTAssertTrue(html.hasSuffix("piece 39 of one long paragraph; omega</p>\n"), html)
        let renders = read.events.filter { $0.type == "tail_html" }.count
        print("[tail_html] \(words.count) pieces, \(renders) provisional renders sent")
        finish.open()
        _ = try await parley.finished(assistant)
    }
}
