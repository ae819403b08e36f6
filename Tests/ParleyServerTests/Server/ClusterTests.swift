import Foundation
import ParleyTestSupport
import XCTest

/// Nodes of one cluster (one PostgreSQL database, one Redis): what one node does, a tab on another
/// sees (`/api/events`), and the limits hold for the cluster, not per node: messages per minute and
/// sign-in attempts. Without Redis, starts and sign-ins answer 503 `limits_unavailable` (fail closed)
/// while reads go on, and `/api/health` names Redis.
final class ClusterTests: XCTestCase {
    private var services: ClusterServices!

    override func setUpWithError() throws {
        services = try ClusterServices()
    }

    func testANotificationMadeOnOneNodeReachesATabOnAnotherAndResumesThereExactly() async throws {
        let settings = try clusterSettings(services)
        let a = try startParley(settings)
        let b = try startParley(settings)
        let ready = FakeUpstream.Gate()
        async let onB = b.userEvents(ready: ready, until: { events in
            events.filter { $0.type == "conversation_created" }.count == 2
        })
        let isReady = await ready.waitUntilOpen()
        XCTAssertTrue(isReady)
        let first = try await a.conversation(["title": "Made on A"])
        let second = try await a.conversation(["title": "Also on A"])
        let seen = try await onB
        let created = seen.notifications.filter { $0.type == "conversation_created" }
        XCTAssertEqual(created.compactMap { ($0.data["conversation"] as? [String: Any])?["id"] as? String }, [first, second])

        // The tab moves to node A with the id of the first: A replays exactly the second (its log came
        // from Redis), not a resync and not the first again.
        let firstID = try XCTUnwrap(seen.events.first { $0.type == "conversation_created" }?.id)
        let resumed = try await a.userEvents(lastEventID: firstID, window: 1)
        XCTAssertEqual(resumed.events.map(\.type), ["conversation_created", "ready"])
        XCTAssertEqual((resumed.notifications.first?.data["conversation"] as? [String: Any])?["id"] as? String, second)
        XCTAssertEqual(resumed.events.first?.id, seen.events.last { $0.type == "conversation_created" }?.id,
                       "one id for one notification on every node")
    }

    func testTheMessageRateIsCountedForTheClusterNotPerNode() async throws {
        let settings = try clusterSettings(services, ["PARLEY_USER_MESSAGES_PER_MINUTE": "2"])
        let a = try startParley(settings)
        let b = try startParley(settings)
        let id = try await a.conversation(["title": "Rate"])
        let firstSend = try await a.call("POST", "/api/conversations/\(id)/messages", json: ["content": "one"])
        XCTAssertEqual(firstSend.status, 201, firstSend.text)
        _ = try await a.finished(try XCTUnwrap(firstSend.assistantID))
        let secondSend = try await b.call("POST", "/api/conversations/\(id)/messages", json: ["content": "two"])
        XCTAssertEqual(secondSend.status, 201, secondSend.text)
        _ = try await b.finished(try XCTUnwrap(secondSend.assistantID))
        let third = try await a.call("POST", "/api/conversations/\(id)/messages", json: ["content": "three"])
        XCTAssertEqual(third.status, 429, third.text)
        XCTAssertEqual(third.errorCode, "rate_limited")
        let wait = try XCTUnwrap(third.headers["retry-after"].flatMap { Int($0) })
        XCTAssertTrue((1...30).contains(wait), "one message comes back every 30 s at 2 per minute: \(wait)")
        let onB = try await b.call("POST", "/api/conversations/\(id)/messages", json: ["content": "three"])
        XCTAssertEqual(onB.status, 429, "the other node counts the same allowance: \(onB.text)")
    }

    func testAUsersLiveRepliesAreCountedForTheCluster() async throws {
        let upstream = try startUpstream()
        let settings = try clusterSettings(services, ["PARLEY_MAX_GENERATIONS_PER_USER": "1",
                                                      "PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1",
                                                      "PARLEY_OPENAI_MODELS": "fake"])
        let a = try startParley(settings)
        let b = try startParley(settings)
        upstream.enqueue(UpstreamStreams.stalling(after: ["Busy"]))
        let id = try await a.conversation(["model": "openai:fake"])
        let running = try await a.call("POST", "/api/conversations/\(id)/messages", json: ["content": "one"])
        XCTAssertEqual(running.status, 201, running.text)
        let other = try await b.conversation(["model": "openai:fake"])
        let refused = try await b.call("POST", "/api/conversations/\(other)/messages", json: ["content": "two"])
        XCTAssertEqual(refused.status, 429, "one live reply per user, on any node: \(refused.text)")
        XCTAssertEqual(refused.errorCode, "too_many_generations")

        let stopped = try await b.call("POST", "/api/messages/\(try XCTUnwrap(running.assistantID))/stop")
        XCTAssertEqual(stopped.json["status"] as? String, "stopped")
        upstream.enqueue(UpstreamStreams.complete(["Now."]))
        let freed = try await Deadline(.seconds(5)).wait(every: .milliseconds(50)) {
            let again = try await b.call("POST", "/api/conversations/\(other)/messages", json: ["content": "two"])
            return again.status == 201
        }
        XCTAssertTrue(freed, "the slot is free once the reply ends")
    }

    func testSignInAttemptsAreCountedForTheCluster() async throws {
        let settings = try clusterSettings(services, Team.settings.merging(["PARLEY_LOGIN_ATTEMPTS": "3"]) { $1 })
        let a = Team(parley: try startParley(settings))
        let b = Team(parley: try startParley(settings))
        for (node, password) in [(a, "wrong 1"), (b, "wrong 2"), (a, "wrong 3")] {
            let failed = try await node.parley.call("POST", "/api/auth/login",
                                                    json: ["username": Team.admin.username, "password": password])
            XCTAssertEqual(failed.status, 401, failed.text)
        }
        let refused = try await b.parley.call("POST", "/api/auth/login",
                                              json: ["username": Team.admin.username, "password": Team.admin.password])
        XCTAssertEqual(refused.status, 429, "three failures over two nodes use up the window: \(refused.text)")
        XCTAssertEqual(refused.errorCode, "too_many_attempts")
        XCTAssertNotNil(refused.headers["retry-after"])
    }

    func testWithoutRedisStartsAndSignInsAnswer503WhileReadsGoOn() async throws {
        let upstream = try startUpstream()
        // Nothing listens on port 1: every Redis call fails at once.
        let settings = try clusterSettings(services, Team.settings, redis: "redis://127.0.0.1:1")
        let team = try Team(parley: startParley(upstream: upstream, settings))
        let admin = try Team.bearer(team.parley, "operator", role: .admin)
        let id = try await team.parley.conversation(as: admin, ["model": "openai:fake"])
        let listed = try await team.parley.call("GET", "/api/conversations", as: admin)
        XCTAssertEqual(listed.status, 200, "reads need no Redis: \(listed.text)")

        let sent = try await team.parley.send(as: admin, id, "hello")
        XCTAssertEqual(sent.status, 503, sent.text)
        XCTAssertEqual(sent.errorCode, "limits_unavailable")
        XCTAssertEqual(sent.headers["retry-after"], "2")
        XCTAssertEqual(upstream.requests.count, 0, "nothing goes upstream uncounted")
        let signIn = try await team.parley.call("POST", "/api/auth/login",
                                                json: ["username": Team.admin.username, "password": Team.admin.password])
        XCTAssertEqual(signIn.status, 503, signIn.text)
        XCTAssertEqual(signIn.errorCode, "limits_unavailable")
        let health = try await team.parley.call("GET", "/api/health")
        XCTAssertEqual(health.status, 503)
        XCTAssertEqual(health.json["down"] as? [String], ["redis"])
    }
}
