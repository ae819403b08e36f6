import Foundation
@testable import ParleyEvents
import ParleySSE
@testable import ParleyServer
import ParleyTestSupport
import XCTest

/// `GET /api/events` over real HTTP: every change reaches the user's stream, a followed reply arrives
/// on the same connection, Last-Event-ID resumes both parts without a gap or a duplicate, a client too
/// far behind gets `resync`, and in team mode a user's stream carries only their own changes.
final class UserEventStreamTests: XCTestCase {
    func testEveryChangeReachesTheUsersStream() async throws {
        let parley = try startParley()
        let ready = FakeUpstream.Gate()
        async let read = parley.userEvents(ready: ready, until: { $0.contains { $0.type == "conversation_deleted" } })
        let attached = await ready.waitUntilOpen()
        XCTAssertTrue(attached, "the stream began with ready")
        let id = try await parley.conversation(["title": "First"])
        let (user, assistant) = try await parley.send(id, "hello")
        _ = try await parley.finished(assistant)
        let regenerated = try await parley.call("POST", "/api/messages/\(assistant)/regenerate", json: [:])
        XCTAssertEqual(regenerated.status, 201, regenerated.text)
        let sibling = try XCTUnwrap(regenerated.json["id"] as? String)
        _ = try await parley.finished(sibling)
        let renamed = try await parley.call("PATCH", "/api/conversations/\(id)", json: ["title": "Second"])
        XCTAssertEqual(renamed.status, 200, renamed.text)
        let switched = try await parley.call("PUT", "/api/conversations/\(id)/current", json: ["message_id": assistant])
        XCTAssertEqual(switched.status, 200, switched.text)
        let deleted = try await parley.call("DELETE", "/api/conversations/\(id)")
        XCTAssertEqual(deleted.status, 204)
        let events = try await read

        let notifications = events.notifications
        let types = notifications.map(\.type)
        XCTAssertEqual(types.first, "conversation_created")
        XCTAssertEqual(types.last, "conversation_deleted")
        XCTAssertEqual(types.sorted(), ["conversation_created", "conversation_deleted", "conversation_updated",
                                        "conversation_updated", "reply_finished", "reply_finished", "reply_started",
                                        "reply_started", "turn"], "\(types)")
        // The replies' own order: each starts, then finishes; the turn comes before its reply.
        for message in [assistant, sibling] {
            let mine = notifications.filter { $0.data["message_id"] as? String == message }
            XCTAssertEqual(mine.map(\.type), ["reply_started", "reply_finished"], message)
            XCTAssertEqual(mine.last?.data["status"] as? String, "complete")
            XCTAssertEqual(mine.first?.data["conversation_id"] as? String, id)
        }
        let turn = try XCTUnwrap(notifications.first { $0.type == "turn" }?.data)
        XCTAssertEqual(turn["conversation_id"] as? String, id)
        XCTAssertEqual(turn["user_message_id"] as? String, user)
        XCTAssertEqual(turn["assistant_message_id"] as? String, assistant)
        XCTAssertLessThan(try XCTUnwrap(types.firstIndex(of: "turn")), try XCTUnwrap(types.firstIndex(of: "reply_started")))

        let created = try XCTUnwrap(notifications.first?.data["conversation"] as? [String: Any])
        XCTAssertEqual(created["id"] as? String, id)
        XCTAssertEqual(created["title"] as? String, "First")
        XCTAssertNil(created["system_prompt"], "notifications never carry system prompts")
        let updates = notifications.filter { $0.type == "conversation_updated" }
            .compactMap { $0.data["conversation"] as? [String: Any] }
        XCTAssertEqual(updates.map { $0["title"] as? String }, ["Second", "Second"])
        XCTAssertEqual(updates.last?["current_leaf_id"] as? String, assistant, "the branch switch")
        XCTAssertEqual(notifications.last?.data["conversation_id"] as? String, id)

        // Ids: one per notification, growing.
        let ids = events.events.filter { $0.type != "ready" }.compactMap { Int64($0.id) }
        XCTAssertEqual(ids.count, notifications.count, "every notification id is a plain S: \(events.events.map(\.id))")
        XCTAssertEqual(ids, ids.sorted())
        XCTAssertEqual(Set(ids).count, ids.count)
    }

    func testAFollowedReplyArrivesOnTheSameStreamAndNotificationsGoOnAfterItsDone() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream)
        let tokens = ["one ", "two ", "three ", "日本 ", "👍🏽"]
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(tokens), start: attached))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        let doneSeen = FakeUpstream.Gate()
        async let read = parley.userEvents(query: "follow=\(assistant)&mode=text", ready: attached,
                                           until: { events in
                                               if events.contains(where: { $0.type == "done" }) { doneSeen.open() }
                                               return events.contains { $0.type == "conversation_updated" }
                                           })
        // Once the stream has delivered the reply's `done`, a change is told on the same connection.
        let finished = await doneSeen.waitUntilOpen()
        XCTAssertTrue(finished, "done arrived")
        let renamed = try await parley.call("PATCH", "/api/conversations/\(id)", json: ["title": "After"])
        XCTAssertEqual(renamed.status, 200)
        let events = try await read
        XCTAssertEqual(events.status, 200)
        XCTAssertEqual(events.text, tokens.joined(), "the reply, rebuilt from the user stream")
        let types = events.events.map(\.type)
        let done = try XCTUnwrap(types.firstIndex(of: "done"))
        let update = try XCTUnwrap(types.lastIndex(of: "conversation_updated"))
        XCTAssertLessThan(done, update, "\(types)")
        XCTAssertEqual(events.done?["status"] as? String, "complete")

        // Reply events carry S.R with R growing, `done` carries S.done, and so does what follows it.
        let replyIDs = events.events.filter { ["snapshot", "delta"].contains($0.type) }.map(\.id)
        XCTAssertFalse(replyIDs.isEmpty)
        let parts = replyIDs.map { $0.split(separator: ".") }
        XCTAssertTrue(parts.allSatisfy { $0.count == 2 }, "\(replyIDs)")
        let rs = parts.compactMap { Int64($0[1]) }
        XCTAssertEqual(rs.count, replyIDs.count)
        XCTAssertEqual(rs, rs.sorted())
        XCTAssertEqual(Set(rs).count, rs.count)
        XCTAssertTrue(events.events[done].id.hasSuffix(".done"), events.events[done].id)
        XCTAssertTrue(events.events[update].id.hasSuffix(".done"), events.events[update].id)

        // Resuming from `done` sends nothing of the reply again, however long after.
        let resumed = try await parley.userEvents(query: "follow=\(assistant)&mode=text",
                                                  lastEventID: events.events[update].id, window: 1)
        XCTAssertEqual(resumed.events.map(\.type), ["ready"])
        XCTAssertEqual(resumed.events.first?.id, events.events[update].id)
    }

    func testReconnectsWithLastEventIDLoseAndRepeatNothingOfEitherPart() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream, ["PARLEY_FRAME_INTERVAL_MS": "5"])
        let tokens = (0..<120).map { index in ["α", "β ", "日本 ", "👍🏽", "w\(index) ", "\n\n", "- item\n"][index % 7] }
        let attached = FakeUpstream.Gate()
        let finish = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(tokens, delayMilliseconds: 3),
                                               start: attached, finish: finish))
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        var all: [SSEEvent] = []
        var lastID: String?
        var titles: [String] = []
        var connections = 0
        let deadline = Deadline(.seconds(90))
        /// `done` and the last rename have both arrived.
        @Sendable func seenAll(_ events: [SSEEvent], _ lastTitle: String?) -> Bool {
            let seen = StreamRead(status: 200, headers: [:], events: events, raw: "").notifications
                .compactMap { ($0.data["conversation"] as? [String: Any])?["title"] as? String }
            return events.contains { $0.type == "done" } && seen.last == lastTitle
        }
        while !seenAll(all, titles.last) {
            guard !deadline.hasPassed else {
                XCTFail("not everything after \(connections) connections in \(deadline.limit)")
                break
            }
            connections += 1
            if connections == 6 { finish.open() }
            let take = connections % 4 + 1
            let previous = all
            let lastTitle = titles.last
            let read = try await parley.userEvents(query: "follow=\(assistant)&mode=text", lastEventID: lastID,
                                                   ready: attached, window: connections < 6 ? 2 : 20,
                                                   until: { events in
                                                       events.filter { $0.type != "ready" }.count >= take
                                                           || seenAll(previous + events, lastTitle)
                                                   })
            XCTAssertEqual(read.status, 200, read.raw)
            let fresh = read.events.filter { $0.type != "ready" }
            all += fresh
            lastID = read.events.last?.id ?? lastID
            // A change while no stream of this user is connected: the next connection replays it.
            if connections < 8 {
                titles.append("Title \(connections)")
                let reply = try await parley.call("PATCH", "/api/conversations/\(id)", json: ["title": titles.last!])
                XCTAssertEqual(reply.status, 200)
            }
        }
        XCTAssertGreaterThan(connections, 5)
        let combined = StreamRead(status: 200, headers: [:], events: all, raw: "")
        XCTAssertEqual(combined.text, tokens.joined(), "text rebuilt from \(connections) connections")
        XCTAssertEqual(all.filter { $0.type == "snapshot" }.count, 1, "resumed connections are replayed exactly")
        XCTAssertEqual(all.filter { $0.type == "done" }.count, 1)
        let seenTitles = combined.notifications.filter { $0.type == "conversation_updated" }
            .compactMap { ($0.data["conversation"] as? [String: Any])?["title"] as? String }
        XCTAssertEqual(seenTitles, titles, "every change exactly once, in order")
        let ids = all.map(\.id)
        XCTAssertEqual(Set(ids).count, ids.count, "no event twice")
        let notificationParts = ids.compactMap { Int64($0.split(separator: ".")[0]) }
        XCTAssertEqual(notificationParts, notificationParts.sorted())
        print("user events: \(connections) connections, \(all.count) events")
    }

    func testAnOpenAICompatibleCallIsToldLikeThePagesOwn() async throws {
        let parley = try startParley()
        let ready = FakeUpstream.Gate()
        async let read = parley.userEvents(ready: ready, until: { $0.contains { $0.type == "reply_finished" } })
        let attached = await ready.waitUntilOpen()
        XCTAssertTrue(attached)
        let reply = try await parley.call("POST", "/v1/chat/completions", json: [
            "model": "demo", "messages": [["role": "user", "content": "hi"]], "stream": false,
        ])
        XCTAssertEqual(reply.status, 200, reply.text)
        let conversationID = try XCTUnwrap(reply.headers["x-parley-conversation"])
        let events = try await read
        XCTAssertEqual(events.notifications.map(\.type),
                       ["conversation_created", "turn", "reply_started", "reply_finished"])
        XCTAssertTrue(events.notifications.allSatisfy {
            ($0.data["conversation"] as? [String: Any])?["id"] as? String ?? $0.data["conversation_id"] as? String
                == conversationID
        })
    }

    func testAClientFurtherBehindThanTheLogIsToldToResync() async throws {
        let parley = try startParley(["PARLEY_USER_EVENT_LOG": "2"])
        let first = try await parley.userEvents(until: { $0.contains { $0.type == "ready" } })
        let start = try XCTUnwrap(first.lastUserEventID)
        // Two changes: both still in the log, replayed exactly.
        _ = try await parley.conversation(["title": "A"])
        _ = try await parley.conversation(["title": "B"])
        let replayed = try await parley.userEvents(lastEventID: start, window: 1)
        XCTAssertEqual(replayed.events.map(\.type), ["conversation_created", "conversation_created", "ready"])
        XCTAssertEqual(replayed.notifications.compactMap { ($0.data["conversation"] as? [String: Any])?["title"] as? String },
                       ["A", "B"])
        // Three more: the first of them has left the log.
        let after = try XCTUnwrap(replayed.lastUserEventID)
        for title in ["C", "D", "E"] { _ = try await parley.conversation(["title": title]) }
        let behind = try await parley.userEvents(lastEventID: after, window: 1)
        XCTAssertEqual(behind.events.map(\.type), ["resync", "ready"])
        // From there on it is current again.
        let current = try XCTUnwrap(behind.lastUserEventID)
        let nothing = try await parley.userEvents(lastEventID: current, window: 1)
        XCTAssertEqual(nothing.events.map(\.type), ["ready"])
        // An id this server never issued (another run's, or made up) is resynced too.
        for foreign in ["5", "\(Int64(current)! + 1_000_000_000)"] {
            let read = try await parley.userEvents(lastEventID: foreign, window: 1)
            XCTAssertEqual(read.events.map(\.type), ["resync", "ready"], foreign)
        }
    }

    func testEachUserHearsOnlyOfTheirOwnChangesAndCannotFollowAnothersReply() async throws {
        let parley = try startTeamParley(["PARLEY_DEMO_TOKENS_PER_SECOND": "0"])
        let ada = try Team.bearer(parley, Team.admin.username, role: .admin)
        let bob = try Team.bearer(parley, "bob")
        let adaReady = FakeUpstream.Gate()
        let bobReady = FakeUpstream.Gate()
        async let adaRead = parley.userEvents(headers: [ada], ready: adaReady,
                                              until: { $0.contains { $0.type == "conversation_deleted" } })
        async let bobRead = parley.userEvents(headers: [bob], ready: bobReady,
                                              until: { $0.contains { $0.type == "conversation_deleted" } })
        let adaAttached = await adaReady.waitUntilOpen()
        let bobAttached = await bobReady.waitUntilOpen()
        XCTAssertTrue(adaAttached && bobAttached)

        let bobs = try await parley.call("POST", "/api/conversations", json: ["title": "Bob's"], headers: [bob])
        let bobsID = try XCTUnwrap(bobs.json["id"] as? String)
        let adas = try await parley.call("POST", "/api/conversations", json: ["title": "Ada's"], headers: [ada])
        let adasID = try XCTUnwrap(adas.json["id"] as? String)
        let sent = try await parley.call("POST", "/api/conversations/\(adasID)/messages", json: ["content": "hi"],
                                         headers: [ada])
        let adasReply = try XCTUnwrap((sent.json["assistant_message"] as? [String: Any])?["id"] as? String)
        _ = try await parley.finished(adasReply, headers: [ada])

        // Bob cannot follow Ada's reply, nor rename or delete her conversation (404, and nothing published).
        let follow = try await parley.call("GET", "/api/events?follow=\(adasReply)", headers: [bob])
        XCTAssertEqual(follow.status, 404, follow.text)
        XCTAssertEqual(follow.errorCode, "not_found")
        let rename = try await parley.call("PATCH", "/api/conversations/\(adasID)", json: ["title": "Mine"],
                                           headers: [bob])
        XCTAssertEqual(rename.status, 404)
        let delete = try await parley.call("DELETE", "/api/conversations/\(adasID)", headers: [bob])
        XCTAssertEqual(delete.status, 404)

        // Each deletes their own last: a leak of anything before would show in the other's stream.
        let bobDeleted = try await parley.call("DELETE", "/api/conversations/\(bobsID)", headers: [bob])
        XCTAssertEqual(bobDeleted.status, 204)
        let adaDeleted = try await parley.call("DELETE", "/api/conversations/\(adasID)", headers: [ada])
        XCTAssertEqual(adaDeleted.status, 204)
        let (adaEvents, bobEvents) = try await (adaRead, bobRead)

        XCTAssertFalse(adaEvents.raw.contains(bobsID), "Ada's stream names nothing of Bob's")
        XCTAssertFalse(bobEvents.raw.contains(adasID), "Bob's stream names nothing of Ada's")
        XCTAssertFalse(bobEvents.raw.contains(adasReply))
        XCTAssertEqual(bobEvents.notifications.map(\.type), ["conversation_created", "conversation_deleted"])
        XCTAssertEqual(adaEvents.notifications.map(\.type).first, "conversation_created")
        XCTAssertTrue(adaEvents.notifications.contains { $0.type == "reply_finished" })
        XCTAssertFalse(adaEvents.raw.contains("Mine"))

        // Without a credential: 401, like every API route.
        let anonymous = try await parley.call("GET", "/api/events")
        XCTAssertEqual(anonymous.status, 401)
        XCTAssertEqual(anonymous.errorCode, "unauthenticated")
    }

    func testStreamsEndWithTheirSessionOrTokenAndWithTheAccount() async throws {
        let team = try startTeam()
        let parley = team.parley
        let carol = try team.addMember("carol")
        let first = try await team.signIn("carol", "member password")
        let second = try await team.signIn("carol", "member password")
        let token = try Team.bearer(parley, "carol")
        let admin = ("Cookie", try await team.signIn())  // changing an account needs an admin session
        let ready = (FakeUpstream.Gate(), FakeUpstream.Gate(), FakeUpstream.Gate())
        // Each read ends only when the server ends the stream (or fails the test after its timeout).
        async let firstRead = parley.userEvents(headers: [("Cookie", first)], ready: ready.0)
        async let secondRead = parley.userEvents(headers: [("Cookie", second)], ready: ready.1)
        async let tokenRead = parley.userEvents(headers: [token], ready: ready.2)
        for gate in [ready.0, ready.1, ready.2] {
            let attached = await gate.waitUntilOpen()
            XCTAssertTrue(attached)
        }

        let signedOut = try await team.call("POST", "/api/auth/logout", cookie: first)
        XCTAssertEqual(signedOut.status, 204)
        let ended = try await firstRead
        XCTAssertEqual(ended.events.map(\.type), ["ready"], "the signed-out session's stream ended")
        let again = try await team.call("GET", "/api/events", cookie: first)
        XCTAssertEqual(again.status, 401, "its reconnect is refused")

        let tokens = try await team.call("GET", "/api/tokens", cookie: second)
        let tokenID = try XCTUnwrap(((tokens.json["items"] as? [[String: Any]])?.first)?["id"] as? String)
        let revoked = try await team.call("DELETE", "/api/tokens/\(tokenID)", cookie: second)
        XCTAssertEqual(revoked.status, 204)
        _ = try await tokenRead

        // The other session's stream is still live, until the account is disabled.
        let created = try await team.call("POST", "/api/conversations", cookie: second, json: ["title": "Still here"])
        XCTAssertEqual(created.status, 201)
        let disabled = try await parley.call("PATCH", "/api/users/\(carol)", json: ["disabled": true], headers: [admin])
        XCTAssertEqual(disabled.status, 200, disabled.text)
        let last = try await secondRead
        XCTAssertEqual(last.notifications.map(\.type), ["conversation_created"])
    }

    func testAPasswordChangeEndsTheOtherSessionsStreamsAndAnAdminResetEndsTheRest() async throws {
        let team = try startTeam()
        let parley = team.parley
        let dave = try team.addMember("dave")
        let other = try await team.signIn("dave", "member password")
        let current = try await team.signIn("dave", "member password")
        let token = try Team.bearer(parley, "dave")
        let admin = ("Cookie", try await team.signIn())  // changing an account needs an admin session
        let ready = (FakeUpstream.Gate(), FakeUpstream.Gate(), FakeUpstream.Gate())
        async let otherRead = parley.userEvents(headers: [("Cookie", other)], ready: ready.0)
        async let currentRead = parley.userEvents(headers: [("Cookie", current)], ready: ready.1)
        async let tokenRead = parley.userEvents(headers: [token], ready: ready.2)
        for gate in [ready.0, ready.1, ready.2] {
            let attached = await gate.waitUntilOpen()
            XCTAssertTrue(attached)
        }
        let changed = try await team.call("POST", "/api/auth/password", cookie: current,
                                          json: ["current": "member password", "new": "a new password"])
        XCTAssertEqual(changed.status, 204, changed.text)
        _ = try await otherRead
        // The session that changed it and the API token stay (tokens are revoked on their own) ...
        let created = try await team.call("POST", "/api/conversations", cookie: current, json: ["title": "Kept"])
        XCTAssertEqual(created.status, 201)
        // ... until an admin resets the password: every session and token of the account ends.
        let reset = try await parley.call("PATCH", "/api/users/\(dave)", json: ["password": "an admin's choice"],
                                          headers: [admin])
        XCTAssertEqual(reset.status, 200, reset.text)
        let (kept, tokenKept) = try await (currentRead, tokenRead)
        XCTAssertEqual(kept.notifications.map(\.type), ["conversation_created"])
        XCTAssertEqual(tokenKept.notifications.map(\.type), ["conversation_created"])
    }

    func testAStreamThatEndsLeavesNothingBehind() async throws {
        let parley = try startParley()
        let ready = FakeUpstream.Gate()
        async let open = parley.userEvents(ready: ready, window: 1)
        let attached = await ready.waitUntilOpen()
        XCTAssertTrue(attached)
        XCTAssertEqual(parley.app.userEvents.streamCount, 1, "the open stream is attached")
        _ = try await open
        for _ in 0..<3 {
            _ = try await parley.userEvents(until: { $0.contains { $0.type == "ready" } })
        }
        // Each client closed its connection after `ready`: the channel lets its stream go.
        let detached = await Deadline(.seconds(10)).wait { parley.app.userEvents.streamCount == 0 }
        XCTAssertTrue(detached, "\(parley.app.userEvents.streamCount) streams still attached")
    }

    func testBadInputIsRefusedBeforeTheStreamStarts() async throws {
        let parley = try startParley()
        let id = try await parley.conversation(["title": "x"])
        let (user, assistant) = try await parley.send(id, "hello")
        _ = try await parley.finished(assistant)
        for bad in ["x", "1.", ".1", "1.2.3", "-1", "+1", "1.x", "1.DONE", "1 2", "99999999999999999999"] {
            let header = try await parley.call("GET", "/api/events", headers: [("Last-Event-ID", bad)])
            XCTAssertEqual(header.status, 400, bad)
            XCTAssertEqual(header.errorCode, "invalid_request", bad)
            let query = try await parley.call("GET", "/api/events?last_event_id=\(bad.replacingOccurrences(of: " ", with: "%20"))")
            XCTAssertEqual(query.status, 400, bad)
        }
        for (query, status, code) in [("follow=", 400, "invalid_request"), ("follow=nope", 404, "not_found"),
                                      ("mode=markdown", 400, "invalid_request")] {
            let reply = try await parley.call("GET", "/api/events?\(query)")
            XCTAssertEqual(reply.status, status, query)
            XCTAssertEqual(reply.errorCode, code, query)
        }
        // A user message can be followed like on /stream: snapshot, done.
        let followUser = try await parley.userEvents(query: "follow=\(user)", until: { $0.contains { $0.type == "done" } })
        XCTAssertEqual(followUser.events.map(\.type), ["ready", "snapshot", "done"])
        // A reply part without `follow` is ignored: the stream follows nothing and its ids say so.
        let first = try await parley.userEvents(until: { $0.contains { $0.type == "ready" } })
        let start = try XCTUnwrap(first.lastUserEventID)
        let plain = try await parley.userEvents(lastEventID: start + ".123", window: 0.5)
        XCTAssertEqual(plain.events.map(\.id), [start])
        // A deleted followed message: 404 on connect.
        _ = try await parley.call("DELETE", "/api/conversations/\(id)")
        let gone = try await parley.call("GET", "/api/events?follow=\(assistant)")
        XCTAssertEqual(gone.status, 404)
    }
}
