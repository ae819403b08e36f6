import Foundation
@testable import ParleyAPI
@testable import ParleyServer
import ParleyStore
import ParleyTestSupport
import XCTest

/// The per-user caps on open streams (PARLEY_MAX_STREAMS_PER_USER: `/api/events`, message streams and
/// streamed `/v1` calls counted together) and on concurrent exports (PARLEY_MAX_EXPORTS_PER_USER):
/// past them a 429 with `Retry-After`, never an eviction; other users go on; a slot frees when its
/// stream ends.
final class StreamCapTests: XCTestCase {
    private static let v1Body = #"{"model":"openai:fake","stream":true,"messages":[{"role":"user","content":"hi"}]}"#

    func testTheThirtyThirdStreamOfAUserIsRefusedWhateverItsKindWhileOthersAreServed() async throws {
        XCTAssertEqual(StreamLimits().maxStreamsPerUser, 32, "the documented default")
        let upstream = try startUpstream { _ in UpstreamStreams.stalling(after: ["first words"]) }
        let parley = try startTeamParley(upstream: upstream)
        let carol = try Team.bearer(parley, "carol")
        let bob = try Team.bearer(parley, "bob")
        let carolID = try XCTUnwrap(parley.app.store.user(username: "carol")).id
        let conversation = try await parley.conversation(as: carol, ["model": "openai:fake"])
        let sent = try await parley.send(as: carol, conversation)
        let live = try required(sent.assistantID)

        // 32 open streams of carol's, of all three kinds.
        var held: [HeldStream] = []
        defer { for stream in held { stream.close() } }
        held.append(try required(try await HeldStream.open(parley, "/api/messages/\(live)/stream", headers: [carol],
                                                           until: "first words")))
        held.append(try required(try await HeldStream.open(parley, "/v1/chat/completions", method: "POST", headers: [carol],
                                                           body: Self.v1Body, until: "first words")))
        for _ in 0..<30 {
            held.append(try required(try await HeldStream.open(parley, "/api/events", headers: [carol],
                                                               until: "event: ready")))
        }
        XCTAssertEqual(parley.app.streams.count(of: carolID, .stream), 32)
        let conversationsBefore = try await parley.call("GET", "/api/conversations", as: carol).items.count

        // The 33rd, of each kind: 429 too_many_streams with Retry-After, nobody's stream evicted.
        for (method, path, body) in [("GET", "/api/events", nil), ("GET", "/api/messages/\(live)/stream", nil),
                                     ("POST", "/v1/chat/completions", Self.v1Body)] {
            let refused = try HeldStream(port: parley.app.port, path, method: method, headers: [carol], body: body)
            defer { refused.close() }
            let answered = try await refused.waitForEnd(timeout: 5)
            XCTAssertTrue(answered, "\(path) answered at once, not as a stream: \(refused.text.prefix(300))")
            XCTAssertEqual(refused.status, 429, "\(path): \(refused.text.prefix(300))")
            XCTAssertEqual(refused.header("Retry-After"), String(OpenStreams.streamRetryAfter), path)
            let error = try XCTUnwrap(refused.json["error"] as? [String: Any], refused.body)
            XCTAssertEqual(error["code"] as? String, "too_many_streams", path)
            XCTAssertTrue((error["message"] as? String ?? "").contains("PARLEY_MAX_STREAMS_PER_USER"), refused.body)
            if path.hasPrefix("/v1") {
                XCTAssertEqual(error["type"] as? String, "rate_limit_error", "OpenAI's shape on /v1")
            }
        }
        let conversationsAfter = try await parley.call("GET", "/api/conversations", as: carol).items.count
        XCTAssertEqual(conversationsAfter, conversationsBefore, "a refused /v1 call stores nothing")
        var ended = 0
        for stream in held where try await stream.read(timeout: 0.05, until: { $0.hasEnded }) { ended += 1 }
        XCTAssertEqual(ended, 0, "no stream was evicted")

        // Meanwhile another user is answered at once, and may open streams of their own.
        let started = ContinuousClock.now
        let bobs = try await parley.call("GET", "/api/conversations", as: bob)
        XCTAssertEqual(bobs.status, 200)
        // Milliseconds in fact; the bound leaves room for a loaded machine.
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5), "bob's request waits for nothing")
        let bobsStream = try await HeldStream.open(parley, "/api/events", headers: [bob], until: "event: ready")
        XCTAssertNotNil(bobsStream, "bob's own stream is admitted")
        bobsStream?.close()

        // Closing one of carol's streams frees its slot.
        held.removeLast().close()
        var admitted: HeldStream?
        let freed = await Deadline(.seconds(10)).wait(every: .milliseconds(50)) {
            admitted = try? await HeldStream.open(parley, "/api/events", headers: [carol], until: "\r\n\r\n", timeout: 5)
            if admitted?.status == 200 { return true }
            admitted?.close()
            return false
        }
        XCTAssertTrue(freed, "a closed stream frees its place")
        admitted?.close()
        _ = try await parley.call("POST", "/api/messages/\(live)/stop", as: carol, json: [:])
    }

    func testTheCapHoldsInLocalModeTooAndIsASetting() async throws {
        let parley = try startParley(["PARLEY_MAX_STREAMS_PER_USER": "2"])
        var held: [HeldStream] = []
        defer { for stream in held { stream.close() } }
        for _ in 0..<2 {
            held.append(try required(try await HeldStream.open(parley, "/api/events", headers: [], until: "event: ready")))
        }
        let refused = try await parley.call("GET", "/api/events")
        XCTAssertEqual(refused.status, 429, refused.text)
        XCTAssertEqual(refused.errorCode, "too_many_streams")
        XCTAssertTrue(refused.errorMessage.contains("at most 2") || refused.errorMessage.contains("At most 2"),
                      refused.text)
    }

    func testAStreamThatEndsByItselfFreesItsPlaceAndAPlainV1CallIsNoStream() async throws {
        let parley = try startParley(["PARLEY_MAX_STREAMS_PER_USER": "1"])
        let conversation = try await parley.conversation()
        let (_, assistant) = try await parley.send(conversation, "hi")
        _ = try await parley.finished(assistant)
        // Its slot is freed before the stream's last chunk is sent, so the next one is never refused.
        for round in 0..<3 {
            let read = try await parley.events(assistant)
            XCTAssertEqual(read.status, 200, "round \(round)")
            XCTAssertEqual(read.events.last?.type, "done", "round \(round)")
        }
        for round in 0..<2 {
            let call = try await parley.call("POST", "/v1/chat/completions", json: [
                "model": "demo", "stream": true, "messages": [["role": "user", "content": "hi"]]])
            XCTAssertEqual(call.status, 200, "round \(round): \(call.text)")
            XCTAssertTrue(call.text.contains("[DONE]"), "round \(round)")
        }
        // With the one place taken, a call without `stream` is still answered: it holds no stream.
        let events = try required(try await HeldStream.open(parley, "/api/events", headers: [], until: "event: ready"))
        defer { events.close() }
        let plain = try await parley.call("POST", "/v1/chat/completions", json: [
            "model": "demo", "messages": [["role": "user", "content": "hi"]]])
        XCTAssertEqual(plain.status, 200, plain.text)
    }

    func testAThirdConcurrentExportOfAUserIsRefusedWhileOthersExport() async throws {
        XCTAssertEqual(StreamLimits().maxExportsPerUser, 2, "the documented default")
        let parley = try startTeamParley()
        let carol = try Team.bearer(parley, "carol")
        let bob = try Team.bearer(parley, "bob")
        let carolID = try XCTUnwrap(parley.app.store.user(username: "carol")).id
        try Self.fillHistory(parley.app.store, owner: carolID)
        _ = try await parley.conversation(as: bob, ["title": "Bob's"])

        // Two exports whose clients do not read: each stays open with most of its document unsent.
        var held: [HeldStream] = []
        defer { for stream in held { stream.close() } }
        for _ in 0..<2 {
            held.append(try required(try await HeldStream.open(parley, "/api/export", headers: [carol],
                                                               until: "parley_export", receiveBuffer: 4096)))
        }
        XCTAssertEqual(parley.app.streams.count(of: carolID, .export), 2)
        let refused = try await parley.call("GET", "/api/export", as: carol)
        XCTAssertEqual(refused.status, 429, String(refused.text.prefix(300)))
        XCTAssertEqual(refused.errorCode, "too_many_exports")
        XCTAssertEqual(refused.headers["retry-after"], String(OpenStreams.exportRetryAfter))
        XCTAssertTrue(refused.errorMessage.contains("PARLEY_MAX_EXPORTS_PER_USER"), refused.text)

        let started = ContinuousClock.now
        let bobs = try await parley.call("GET", "/api/export", as: bob)
        XCTAssertEqual(bobs.status, 200, "bob's export is his own")
        XCTAssertEqual((bobs.json["conversations"] as? [Any])?.count, 1)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5), "bob's export waits for nobody's")

        // A client that leaves frees its export's place.
        held.removeLast().close()
        let freed = await Deadline(.seconds(10)).wait(every: .milliseconds(50)) {
            parley.app.streams.count(of: carolID, .export) < 2
        }
        XCTAssertTrue(freed, "a closed export frees its place")
        for stream in held { stream.close() }
        held = []
        // An export read to its end frees its place too: one after another, never refused.
        for round in 0..<3 {
            let whole = try await parley.call("GET", "/api/export", as: carol)
            XCTAssertEqual(whole.status, 200, "round \(round): \(whole.text.prefix(300))")
        }
    }

    /// Six conversations of two 1 MB turns each: an export of about 12 MB, far more than the loopback
    /// socket buffers take off the server, so a client that does not read holds it open.
    static func fillHistory(_ store: Store, owner: String) throws {
        let text = String(repeating: "lorem ipsum dolor sit amet ", count: 40_000)
        for index in 0..<6 {
            let conversation = try store.createConversation(title: "Long \(index)", ownedBy: owner)
            try store.appendTranscript(conversationID: conversation.id, turns: [
                TranscriptTurn(role: .user, content: text, html: nil),
                TranscriptTurn(role: .assistant, content: text, html: nil),
            ])
        }
    }
}
