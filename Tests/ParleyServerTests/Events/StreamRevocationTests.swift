import Foundation
@testable import ParleyAPI
@testable import ParleyAccounts
@testable import ParleyServer
import ParleyTestSupport
import XCTest

/// Every stream ends with the credential it was opened with (sign-out, session or token revoked,
/// password changed, account reset or disabled), whatever its kind: a message's stream, a streamed
/// `/v1` call, `/api/events`, and an export is cut. The upstream stalls after its first words, so
/// each reply is still streaming when its credential ends: what ends is the stream to that client
/// (a tab's reply goes on server-side, by design); streams of other credentials stay open.
final class StreamRevocationTests: XCTestCase {
    /// How soon the server must end a stream once its credential has ended.
    private static let promptly: TimeInterval = 5

    private func stallingTeam() throws -> Team {
        let upstream = try startUpstream { _ in UpstreamStreams.stalling(after: ["first words"]) }
        return try startTeam(upstream: upstream)
    }

    /// A live (stalled) reply of the user signed in with `cookie`; returns its message id.
    private func liveReply(_ team: Team, _ cookie: String) async throws -> String {
        let conversation = try await team.call("POST", "/api/conversations", cookie: cookie,
                                               json: ["model": "openai:fake"])
        let sent = try await team.call("POST", "/api/conversations/\(try required(conversation.json["id"] as? String))/messages",
                                       cookie: cookie, json: ["content": "hello"])
        XCTAssertEqual(sent.status, 201, sent.text)
        return try required(sent.assistantID)
    }

    private func messageStream(_ team: Team, _ messageID: String, _ auth: (String, String)) async throws -> HeldStream {
        try required(try await HeldStream.open(team.parley, "/api/messages/\(messageID)/stream", headers: [auth],
                                               until: "first words"))
    }

    /// The id of the caller's other session (the one that is not `cookie`'s).
    private func otherSessionID(_ team: Team, _ cookie: String) async throws -> String {
        let sessions = try await team.call("GET", "/api/auth/sessions", cookie: cookie)
        return try required(sessions.items.first { $0["current"] as? Bool == false }?["id"] as? String)
    }

    private func assertEnds(_ stream: HeldStream, _ what: String, file: StaticString = #filePath,
                            line: UInt = #line) async throws {
        let ended = try await stream.waitForEnd(timeout: Self.promptly)
        XCTAssertTrue(ended, "\(what) was not ended within \(Self.promptly) s", file: file, line: line)
    }

    private func assertStaysOpen(_ stream: HeldStream, _ what: String, file: StaticString = #filePath,
                                 line: UInt = #line) async throws {
        let ended = try await stream.read(timeout: 0.5) { $0.hasEnded }
        XCTAssertFalse(ended, "\(what) should stay open", file: file, line: line)
    }

    // MARK: - By credential

    func testRevokingASessionEndsItsMessageStreamAndOnlyThat() async throws {
        let team = try stallingTeam()
        try team.addMember("carol")
        let revokedCookie = try await team.signIn("carol", "member password")
        let keptCookie = try await team.signIn("carol", "member password")
        let live = try await liveReply(team, revokedCookie)
        let revoked = try await messageStream(team, live, ("Cookie", revokedCookie))
        let kept = try await messageStream(team, live, ("Cookie", keptCookie))
        defer { revoked.close(); kept.close() }

        let id = try await otherSessionID(team, keptCookie)
        let answer = try await team.call("DELETE", "/api/auth/sessions/\(id)", cookie: keptCookie)
        XCTAssertEqual(answer.status, 204, answer.text)
        try await assertEnds(revoked, "the revoked session's message stream")
        try await assertStaysOpen(kept, "the other session's stream of the same reply")
        let message = try await team.call("GET", "/api/messages/\(live)", cookie: keptCookie)
        XCTAssertEqual(message.json["status"] as? String, "streaming", "the reply itself goes on (decoupled from tabs)")
        let again = try await team.call("GET", "/api/messages/\(live)/stream", cookie: revokedCookie)
        XCTAssertEqual(again.status, 401, "its reconnect is refused")
        _ = try await team.call("POST", "/api/messages/\(live)/stop", cookie: keptCookie, json: [:])
    }

    func testRevokingATokenEndsItsStreamedV1Call() async throws {
        let team = try stallingTeam()
        try team.addMember("carol")
        let cookie = try await team.signIn("carol", "member password")
        let created = try await team.call("POST", "/api/tokens", cookie: cookie, json: ["name": "script"])
        XCTAssertEqual(created.status, 201, created.text)
        let secret = try required(created.json["token"] as? String)
        let tokenID = try required(created.json["id"] as? String)
        let body = #"{"model":"openai:fake","stream":true,"messages":[{"role":"user","content":"hi"}]}"#
        let call = try required(try await HeldStream.open(team.parley, "/v1/chat/completions", method: "POST",
                                                          headers: [("Authorization", "Bearer \(secret)")], body: body,
                                                          until: "first words"))
        defer { call.close() }
        let sessionStream = try await HeldStream.open(team.parley, "/api/events", headers: [("Cookie", cookie)],
                                                      until: "event: ready")
        defer { sessionStream?.close() }

        let revoked = try await team.call("DELETE", "/api/tokens/\(tokenID)", cookie: cookie)
        XCTAssertEqual(revoked.status, 204, revoked.text)
        try await assertEnds(call, "the revoked token's /v1 stream")
        XCTAssertFalse(call.body.contains("[DONE]"), "the call was cut, not answered to its end")
        // As when a script leaves: its reply stops (a /v1 stream is its reply's only reader).
        let messageID = try required(call.header("X-Parley-Message"))
        let stored = try await team.parley.finished(messageID, headers: [("Cookie", cookie)])
        XCTAssertEqual(stored["status"] as? String, "stopped")
        try await assertStaysOpen(try required(sessionStream), "the session's own stream")
    }

    func testSignOutEndsTheSessionsMessageAndUserEventStreams() async throws {
        let team = try stallingTeam()
        try team.addMember("carol")
        let cookie = try await team.signIn("carol", "member password")
        let live = try await liveReply(team, cookie)
        let stream = try await messageStream(team, live, ("Cookie", cookie))
        let events = try required(try await HeldStream.open(team.parley, "/api/events", headers: [("Cookie", cookie)],
                                                            until: "event: ready"))
        defer { stream.close(); events.close() }

        let signedOut = try await team.call("POST", "/api/auth/logout", cookie: cookie)
        XCTAssertEqual(signedOut.status, 204)
        try await assertEnds(stream, "the signed-out session's message stream")
        try await assertEnds(events, "the signed-out session's /api/events")
    }

    func testAPasswordChangeEndsTheOtherSessionsStreamsAndDisablingEndsTheRest() async throws {
        let team = try stallingTeam()
        let carol = try team.addMember("carol")
        let other = try await team.signIn("carol", "member password")
        let current = try await team.signIn("carol", "member password")
        let token = try Team.bearer(team.parley, "carol")
        let admin = try await team.signIn()
        let live = try await liveReply(team, current)
        let otherStream = try await messageStream(team, live, ("Cookie", other))
        let currentStream = try await messageStream(team, live, ("Cookie", current))
        let tokenStream = try await messageStream(team, live, token)
        defer { otherStream.close(); currentStream.close(); tokenStream.close() }

        let changed = try await team.call("POST", "/api/auth/password", cookie: current,
                                          json: ["current": "member password", "new": "a new password"])
        XCTAssertEqual(changed.status, 204, changed.text)
        try await assertEnds(otherStream, "the other session's message stream")
        try await assertStaysOpen(currentStream, "the stream of the session that changed the password")
        try await assertStaysOpen(tokenStream, "an API token's stream (tokens are revoked on their own)")

        let disabled = try await team.call("PATCH", "/api/users/\(carol)", cookie: admin, json: ["disabled": true])
        XCTAssertEqual(disabled.status, 200, disabled.text)
        try await assertEnds(currentStream, "a disabled account's session stream")
        try await assertEnds(tokenStream, "a disabled account's token stream")
    }

    func testAnAdminPasswordResetEndsTheAccountsStreams() async throws {
        let team = try stallingTeam()
        let carol = try team.addMember("carol")
        let cookie = try await team.signIn("carol", "member password")
        let token = try Team.bearer(team.parley, "carol")
        let admin = try await team.signIn()
        let live = try await liveReply(team, cookie)
        let sessionStream = try await messageStream(team, live, ("Cookie", cookie))
        let tokenStream = try await messageStream(team, live, token)
        let adminEvents = try required(try await HeldStream.open(team.parley, "/api/events", headers: [("Cookie", admin)],
                                                                 until: "event: ready"))
        defer { sessionStream.close(); tokenStream.close(); adminEvents.close() }

        let reset = try await team.call("PATCH", "/api/users/\(carol)", cookie: admin, json: ["password": "an admin's choice"])
        XCTAssertEqual(reset.status, 200, reset.text)
        try await assertEnds(sessionStream, "the reset account's session stream")
        try await assertEnds(tokenStream, "the reset account's token stream")
        try await assertStaysOpen(adminEvents, "the admin's own stream")
    }

    func testSessionsASignInEndsTakeTheirStreamsWithThem() async throws {
        let team = try startTeam(["PARLEY_LOGIN_ATTEMPTS": "1000"])
        try team.addMember("carol")
        // A sign-in that brings a session along ends it (no fixation): its stream ends too.
        let brought = try await team.signIn("carol", "member password")
        let broughtStream = try required(try await HeldStream.open(team.parley, "/api/events",
                                                                   headers: [("Cookie", brought)], until: "event: ready"))
        defer { broughtStream.close() }
        let again = try await team.parley.call("POST", "/api/auth/login",
                                               json: ["username": "carol", "password": "member password"],
                                               headers: [("Cookie", brought)])
        XCTAssertEqual(again.status, 200, again.text)
        try await assertEnds(broughtStream, "the stream of the session a sign-in replaced")

        // Past the sessions a user may hold, the least recently used end, and so do their streams.
        let oldest = try await team.signIn("carol", "member password")
        let oldestStream = try required(try await HeldStream.open(team.parley, "/api/events",
                                                                  headers: [("Cookie", oldest)], until: "event: ready"))
        defer { oldestStream.close() }
        var newest = ""
        for _ in 0..<AccountRules.maxSessionsPerUser {
            newest = try await team.signIn("carol", "member password")
        }
        let oldestStatus = try await team.me(oldest)
        XCTAssertEqual(oldestStatus, 401, "the oldest session was trimmed")
        try await assertEnds(oldestStream, "the trimmed session's stream")
        let newestStatus = try await team.me(newest)
        XCTAssertEqual(newestStatus, 200)
    }

    // MARK: - Exports

    func testRevokingASessionCutsItsExport() async throws {
        let team = try startTeam()
        let carol = try team.addMember("carol")
        try StreamCapTests.fillHistory(team.parley.app.store, owner: carol)
        let revokedCookie = try await team.signIn("carol", "member password")
        let keptCookie = try await team.signIn("carol", "member password")
        // A client that does not read: the export stays open with most of its document unsent.
        let export = try required(try await HeldStream.open(team.parley, "/api/export", headers: [("Cookie", revokedCookie)],
                                                            until: "parley_export", receiveBuffer: 4096))
        defer { export.close() }

        let id = try await otherSessionID(team, keptCookie)
        let answer = try await team.call("DELETE", "/api/auth/sessions/\(id)", cookie: keptCookie)
        XCTAssertEqual(answer.status, 204, answer.text)
        // What was already made still arrives; then the body is cut, never completed.
        let closed = try await export.read(timeout: 30) { $0.isClosed || $0.hasLastChunk }
        XCTAssertTrue(closed, "the export of a revoked session ends")
        XCTAssertFalse(export.hasLastChunk, "it is cut off, so it cannot pass for a whole document")
        XCTAssertLessThan(export.bodyCount, 12_000_000, "the rest of the document was not made")
        let freed = await Deadline(.seconds(10)).wait { team.parley.app.streams.count(of: carol, .export) == 0 }
        XCTAssertTrue(freed, "the cut export freed its place")
    }
}
