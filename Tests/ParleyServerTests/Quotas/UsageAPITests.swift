import Foundation
import ParleyTestSupport
import XCTest

/// Tokens per reply (the provider's, or an estimate marked `estimated`), totals per conversation,
/// `GET /api/usage` by day and model for the caller alone, and the admin's per-user totals.
final class UsageAPITests: XCTestCase {
    private static func today() -> String {
        String(ISO8601DateFormatter().string(from: Date()).prefix(10))
    }

    func testReportedUsageIsStoredAndMissingUsageIsEstimated() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(UpstreamStreams.complete(["reported"]),  // 7 in, 3 out
                         .openAIChat(tokens: ["abcdefgh", "ijklmnopqrst"]))  // no usage: 20 bytes
        let parley = try startParley(upstream: upstream)
        let id = try await parley.conversation(["model": "openai:fake", "system_prompt": "12345678"])
        let (_, first) = try await parley.send(id, "question")
        let reported = try await parley.finished(first)
        XCTAssertEqual(reported["usage"] as? [String: AnyHashable],
                       ["input_tokens": 7, "output_tokens": 3, "estimated": false])
        let (_, second) = try await parley.send(id, "next one")
        let estimated = try await parley.finished(second)
        // Input: system prompt (8) + "question" (8) + "reported" (8) + "next one" (8) bytes, / 4.
        XCTAssertEqual(estimated["usage"] as? [String: AnyHashable],
                       ["input_tokens": 8, "output_tokens": 5, "estimated": true])
        let conversation = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(conversation.json["usage"] as? [String: AnyHashable],
                       ["input_tokens": 15, "output_tokens": 8, "replies": 2, "estimated_replies": 1])
        let listed = try await parley.call("GET", "/api/conversations")
        XCTAssertEqual(listed.items.first?["usage"] as? [String: AnyHashable],
                       conversation.json["usage"] as? [String: AnyHashable])
    }

    /// A client following the reply live gets in `done` the usage the store keeps (the estimate, marked),
    /// as a client reading `done` later (built from the row) does.
    func testDoneCarriesTheStoredUsageEstimateIncluded() async throws {
        let upstream = try startUpstream()
        let attached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(.openAIChat(tokens: ["abcdefgh", "ijklmnopqrst"]), start: attached))
        let parley = try startParley(upstream: upstream)
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, reply) = try await parley.send(id, "question")
        let live = try await parley.events(reply, mode: "text", attached: attached)
        let stored = try await parley.finished(reply)
        let expected: [String: AnyHashable] = ["input_tokens": 2, "output_tokens": 5, "estimated": true]
        XCTAssertEqual(stored["usage"] as? [String: AnyHashable], expected)
        // The event's data as JSON text, read exactly (JSONSerialization would read `true` as 1).
        func doneUsage(_ read: StreamRead) -> [String: AnyHashable]? {
            guard let done = read.events.last(where: { $0.type == "done" }),
                  let object = ExactJSON.parse(done.data)?.foundation as? [String: Any] else { return nil }
            return object["usage"] as? [String: AnyHashable]
        }
        XCTAssertEqual(doneUsage(live), expected, "live done: \(live.raw)")
        let late = try await parley.events(reply, mode: "text")
        XCTAssertEqual(doneUsage(late), expected, "late done: \(late.raw)")
        // Reported by the provider: the same shape as the message's `usage`, `estimated` false.
        let reportedAttached = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(["reported"]), start: reportedAttached))
        let (_, second) = try await parley.send(id, "again")
        let reported = try await parley.events(second, mode: "text", attached: reportedAttached)
        XCTAssertEqual(doneUsage(reported), ["input_tokens": 7, "output_tokens": 3, "estimated": false],
                       reported.raw)
    }

    func testAStoppedReplyGetsAnEstimate() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(UpstreamStreams.stalling(after: ["twelve bytes"]))
        let parley = try startParley(upstream: upstream)
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, reply) = try await parley.send(id, "hi")
        _ = try await parley.events(reply, until: { $0.contains { $0.data.contains("twelve bytes") } })
        let stopped = try await parley.call("POST", "/api/messages/\(reply)/stop", json: [:])
        XCTAssertEqual(stopped.json["status"] as? String, "stopped", stopped.text)
        let stored = try await parley.message(reply)
        XCTAssertEqual(stored["usage"] as? [String: AnyHashable],
                       ["input_tokens": 0, "output_tokens": 3, "estimated": true])
    }

    func testTheUsageReportIsByDayAndModelForTheCallerOnly() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(UpstreamStreams.complete(["a"]), UpstreamStreams.complete(["b"]))
        let parley = try startTeamParley(upstream: upstream)
        let alice = try Team.bearer(parley, "alice"), bob = try Team.bearer(parley, "bob")
        for model in ["openai:fake", "openai:fake", "demo"] {
            let id = try await parley.conversation(as: alice, ["model": model])
            let sent = try await parley.send(as: alice, id)
            _ = try await parley.finished(try XCTUnwrap(sent.assistantID), headers: [alice])
        }
        let today = Self.today()
        let report = try await parley.call("GET", "/api/usage?from=\(today)&to=\(today)", as: alice)
        XCTAssertEqual(report.status, 200, report.text)
        let days = try XCTUnwrap(report.json["days"] as? [[String: Any]])
        XCTAssertEqual(days.map { $0["model"] as? String }, ["demo", "openai:fake"], report.text)
        XCTAssertEqual(days.map { $0["day"] as? String }, [today, today])
        XCTAssertEqual(days[1]["replies"] as? Int, 2)
        XCTAssertEqual(days[1]["input_tokens"] as? Int, 14)
        XCTAssertEqual(days[1]["output_tokens"] as? Int, 6)
        let total = try XCTUnwrap(report.json["total"] as? [String: Any])
        XCTAssertEqual(total["replies"] as? Int, 3)
        XCTAssertEqual(report.json["from"] as? String, today)

        let defaultRange = try await parley.call("GET", "/api/usage", as: alice)
        XCTAssertEqual((defaultRange.json["total"] as? [String: Any])?["replies"] as? Int, 3, "today is in the default range")
        let bobs = try await parley.call("GET", "/api/usage", as: bob)
        XCTAssertEqual(bobs.status, 200)
        XCTAssertTrue((bobs.json["days"] as? [Any])?.isEmpty ?? false, "bob sees none of alice's usage: \(bobs.text)")
        let past = try await parley.call("GET", "/api/usage?from=2020-01-01&to=2020-01-31", as: alice)
        XCTAssertTrue((past.json["days"] as? [Any])?.isEmpty ?? false)
    }

    func testBadRangesAre400() async throws {
        let parley = try startParley(["PARLEY_USAGE_MAX_DAYS": "7"])
        for query in ["from=2026-1-01", "to=yesterday", "from=2026-02-30&to=2026-03-01", "from=2026-13-01&to=2026-13-02",
                      "from=2026-03-02&to=2026-03-01", "from=2026-03-01&to=2026-03-08", "from=١٩٧٠-01-01"] {
            let reply = try await parley.call("GET", "/api/usage?\(query)")
            XCTAssertEqual(reply.status, 400, "\(query): \(reply.text)")
            XCTAssertEqual(reply.errorCode, "invalid_request")
        }
        let week = try await parley.call("GET", "/api/usage?from=2026-03-01&to=2026-03-07")
        XCTAssertEqual(week.status, 200, "7 days are allowed: \(week.text)")
        let tooLong = try await parley.call("GET", "/api/usage?from=2026-03-01&to=2026-03-08")
        XCTAssertTrue(tooLong.errorMessage.contains("PARLEY_USAGE_MAX_DAYS"), tooLong.errorMessage)
    }

    func testAdminsSeeAUsersTokenTotalsWithoutContent() async throws {
        let parley = try startTeamParley()
        let admin = try Team.bearer(parley, "root", role: .admin)
        let bob = try Team.bearer(parley, "bob")
        let id = try await parley.conversation(as: bob, ["title": "bob's secret plans"])
        let sent = try await parley.send(as: bob, id, "private question")
        _ = try await parley.finished(try XCTUnwrap(sent.assistantID), headers: [bob])
        let bobID = try XCTUnwrap(try parley.app.store.user(username: "bob")).id

        let usage = try await parley.call("GET", "/api/users/\(bobID)/usage", as: admin)
        XCTAssertEqual(usage.status, 200, usage.text)
        let tokens = try XCTUnwrap(usage.json["tokens"] as? [String: Any])
        XCTAssertEqual(tokens["replies"] as? Int, 1)
        XCTAssertGreaterThan(tokens["output_tokens"] as? Int ?? 0, 0)
        XCTAssertFalse(usage.text.contains("secret") || usage.text.contains("private"), usage.text)

        let member = try await parley.call("GET", "/api/users/\(bobID)/usage", as: bob)
        XCTAssertEqual(member.status, 403, member.text)
        let unknown = try await parley.call("GET", "/api/users/no-such-user/usage", as: admin)
        XCTAssertEqual(unknown.status, 404, unknown.text)
    }
}
