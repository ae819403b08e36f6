import Foundation
@testable import ParleyQuotas
@testable import ParleyServer
import ParleyTestSupport
import XCTest

/// Per-user quotas over real HTTP: live replies at once, messages per minute, output tokens per day.
/// Each refusal is a 429 with `Retry-After` and an error naming its setting; other users go on.
final class QuotaTests: XCTestCase {
    // MARK: - Live replies at once

    func testTheLiveReplyCapIsPerTeamUser() async throws {
        // A slow demo model keeps replies live while the test sends.
        let parley = try startTeamParley(["PARLEY_MAX_GENERATIONS_PER_USER": "1", "PARLEY_DEMO_TOKENS_PER_SECOND": "2"])
        let bob = try Team.bearer(parley, "bob")
        let carol = try Team.bearer(parley, "carol")
        let bobs = try await parley.conversation(as: bob)
        let carols = try await parley.conversation(as: carol)
        let first = try await parley.send(as: bob, bobs)
        XCTAssertEqual(first.status, 201, first.text)
        let refused = try await parley.send(as: bob, bobs)
        XCTAssertEqual(refused.status, 429, refused.text)
        XCTAssertEqual(refused.errorCode, "too_many_generations")
        XCTAssertEqual(refused.headers["retry-after"], "1")
        XCTAssertTrue(refused.errorMessage.contains("PARLEY_MAX_GENERATIONS_PER_USER"), refused.text)
        let served = try await parley.send(as: carol, carols)
        XCTAssertEqual(served.status, 201, "bob at his cap does not hold carol back: \(served.text)")
        for (auth, reply) in [(bob, first), (carol, served)] {
            _ = try await parley.call("POST", "/api/messages/\(try XCTUnwrap(reply.assistantID))/stop", as: auth, json: [:])
        }
        let again = try await parley.send(as: bob, bobs)
        XCTAssertEqual(again.status, 201, "a stopped reply frees its place: \(again.text)")
        _ = try await parley.call("POST", "/api/messages/\(try XCTUnwrap(again.assistantID))/stop", as: bob, json: [:])
    }

    // MARK: - Messages per minute

    func testSendRegenerateAndContinueEachTakeAMessageOfTheMinute() async throws {
        let parley = try startTeamParley(["PARLEY_USER_MESSAGES_PER_MINUTE": "3"])
        let bob = try Team.bearer(parley, "bob")
        let carol = try Team.bearer(parley, "carol")
        let conversation = try await parley.conversation(as: bob)
        let sent = try await parley.send(as: bob, conversation)
        XCTAssertEqual(sent.status, 201, sent.text)
        let assistant = try XCTUnwrap(sent.assistantID)
        _ = try await parley.finished(assistant, headers: [bob])
        let regenerated = try await parley.call("POST", "/api/messages/\(assistant)/regenerate", as: bob, json: [:])
        XCTAssertEqual(regenerated.status, 201, regenerated.text)
        let sibling = try XCTUnwrap(regenerated.json["id"] as? String)
        _ = try await parley.finished(sibling, headers: [bob])
        let continued = try await parley.call("POST", "/api/messages/\(sibling)/continue", as: bob, json: [:])
        XCTAssertEqual(continued.status, 200, continued.text)
        _ = try await parley.finished(sibling, headers: [bob])

        for (path, body) in [("/api/conversations/\(conversation)/messages", ["content": "more"]),
                             ("/api/messages/\(assistant)/regenerate", [:]),
                             ("/api/messages/\(sibling)/continue", [:])] {
            let refused = try await parley.call("POST", path, as: bob, json: body)
            XCTAssertEqual(refused.status, 429, "\(path): \(refused.text)")
            XCTAssertEqual(refused.errorCode, "rate_limited", path)
            XCTAssertTrue(refused.errorMessage.contains("PARLEY_USER_MESSAGES_PER_MINUTE"), refused.text)
            // 3 a minute: a token comes back every 20 s; some of that has passed already.
            let wait = try XCTUnwrap(Int(refused.headers["retry-after"] ?? ""), refused.text)
            XCTAssertGreaterThanOrEqual(wait, 1)
            XCTAssertLessThanOrEqual(wait, 20)
        }
        let other = try await parley.send(as: carol, try await parley.conversation(as: carol))
        XCTAssertEqual(other.status, 201, "carol has a bucket of her own: \(other.text)")
        // Nothing was stored for the refused messages.
        let shown = try await parley.call("GET", "/api/conversations/\(conversation)", as: bob)
        XCTAssertEqual((shown.json["messages"] as? [Any])?.count, 2)
    }

    func testASurfaceActionTakesAMessageOfTheMinuteBeforeItIsChecked() async throws {
        let parley = try startTeamParley(["PARLEY_USER_MESSAGES_PER_MINUTE": "4"])
        let bob = try Team.bearer(parley, "bob")
        let sent = try await parley.send(as: bob, try await parley.conversation(as: bob))
        XCTAssertEqual(sent.status, 201, sent.text)
        let assistant = try XCTUnwrap(sent.assistantID)
        _ = try await parley.finished(assistant, headers: [bob])
        let path = "/api/messages/\(assistant)/surfaces/trip/actions"
        // The size is judged before any parse: a large body that is not JSON is 413, not invalid_json.
        let large = try await parley.call("POST", path, body: Array(repeating: UInt8(ascii: "x"), count: 70_000), headers: [bob])
        XCTAssertEqual(large.status, 413, large.text)
        XCTAssertEqual(large.errorCode, "too_large", large.text)
        let action: [String: Any] = ["name": "book", "surfaceId": "trip", "sourceComponentId": "go",
                                     "timestamp": "2026-12-05T08:00:00Z", "context": [:]]
        for _ in 0..<2 {
            let refused = try await parley.call("POST", path, as: bob, json: action)
            XCTAssertEqual(refused.errorCode, "unknown_surface", refused.text)
        }
        // Send, the large body and two actions on a message that drew no surface: the minute's 4 are spent.
        let limited = try await parley.call("POST", path, as: bob, json: action)
        XCTAssertEqual(limited.status, 429, limited.text)
        XCTAssertEqual(limited.errorCode, "rate_limited", limited.text)
    }

    func testLocalModeKeepsTheLimitAtAGenerousDefault() async throws {
        XCTAssertEqual(try ParleyConfiguration(environment: [:], arguments: []).usage.messagesPerMinute(in: .local), 600)
        XCTAssertEqual(try ParleyConfiguration(environment: [:], arguments: []).usage.messagesPerMinute(in: .team), 20)
        let parley = try startParley(["PARLEY_USER_MESSAGES_PER_MINUTE": "1"])
        let conversation = try await parley.conversation()
        _ = try await parley.send(conversation, "one")
        let refused = try await parley.call("POST", "/api/conversations/\(conversation)/messages", json: ["content": "two"])
        XCTAssertEqual(refused.status, 429, "local mode's one user has the limit too: \(refused.text)")
        XCTAssertEqual(refused.errorCode, "rate_limited")
        XCTAssertEqual(refused.headers["retry-after"].flatMap(Int.init).map { (55...60).contains($0) }, true)
    }

    // MARK: - Output tokens per day

    func testASpentDailyBudgetRefusesNewRepliesUntilUTCMidnight() async throws {
        let parley = try startTeamParley(["PARLEY_USER_DAILY_OUTPUT_TOKENS": "5"])
        let bob = try Team.bearer(parley, "bob")
        let carol = try Team.bearer(parley, "carol")
        let conversation = try await parley.conversation(as: bob)
        let sent = try await parley.send(as: bob, conversation)
        XCTAssertEqual(sent.status, 201, "nothing spent yet: \(sent.text)")
        let assistant = try XCTUnwrap(sent.assistantID)
        let finished = try await parley.finished(assistant, headers: [bob])
        let reported = try XCTUnwrap((finished["usage"] as? [String: Any])?["output_tokens"] as? Int)
        XCTAssertGreaterThan(reported, 5, "the demo answer is longer than the budget")
        let bobID = try XCTUnwrap(try parley.app.store.user(username: "bob")).id
        XCTAssertEqual(try parley.app.store.outputTokens(userID: bobID, on: Date()), reported,
                       "the provider's output_tokens are what is counted")

        for (path, body) in [("/api/conversations/\(conversation)/messages", ["content": "more"]),
                             ("/api/messages/\(assistant)/regenerate", [:]),
                             ("/api/messages/\(assistant)/continue", [:])] {
            let refused = try await parley.call("POST", path, as: bob, json: body)
            XCTAssertEqual(refused.status, 429, "\(path): \(refused.text)")
            XCTAssertEqual(refused.errorCode, "daily_budget_exhausted", path)
            XCTAssertTrue(refused.errorMessage.contains("PARLEY_USER_DAILY_OUTPUT_TOKENS"), refused.text)
            let wait = try XCTUnwrap(Int(refused.headers["retry-after"] ?? ""))
            let untilMidnight = Quotas.nextUTCMidnight(after: Date()).timeIntervalSinceNow
            XCTAssertEqual(Double(wait), untilMidnight, accuracy: 5, "Retry-After runs to 00:00 UTC")
        }
        let other = try await parley.send(as: carol, try await parley.conversation(as: carol))
        XCTAssertEqual(other.status, 201, "the budget is per user: \(other.text)")
        // Deleting the conversation does not give the budget back.
        _ = try await parley.call("DELETE", "/api/conversations/\(conversation)", as: bob)
        let still = try await parley.send(as: bob, try await parley.conversation(as: bob))
        XCTAssertEqual(still.errorCode, "daily_budget_exhausted")
    }

    func testWithoutReportedUsageTheBudgetCountsBytesOverFour() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(.openAIChat(tokens: ["abcdefgh", "ijklmnopqrst"]))  // 20 bytes, no usage chunk
        let parley = try startTeamParley(upstream: upstream, ["PARLEY_USER_DAILY_OUTPUT_TOKENS": "1000"])
        let bob = try Team.bearer(parley, "bob")
        let sent = try await parley.send(as: bob, try await parley.conversation(as: bob, ["model": "openai:fake"]))
        let finished = try await parley.finished(try XCTUnwrap(sent.assistantID), headers: [bob])
        let usage = try XCTUnwrap(finished["usage"] as? [String: Any], "\(finished)")
        XCTAssertEqual(usage["estimated"] as? Bool, true, "no usage from the provider: an estimate, marked")
        XCTAssertEqual(usage["output_tokens"] as? Int, 5)
        let bobID = try XCTUnwrap(try parley.app.store.user(username: "bob")).id
        XCTAssertEqual(try parley.app.store.outputTokens(userID: bobID, on: Date()), 5)
        XCTAssertEqual(try parley.app.store.outputTokens(userID: bobID, on: Date().addingTimeInterval(86_400)), 0,
                       "tomorrow starts at zero")
    }

    func testTheBudgetIsOffByDefault() throws {
        XCTAssertEqual(try ParleyConfiguration(environment: [:], arguments: []).usage.dailyOutputTokens, 0)
    }
}

/// The token bucket alone, on an injected clock.
final class MessageRateLimiterTests: XCTestCase {
    private final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var seconds: TimeInterval = 1000
        var now: TimeInterval { lock.withLock { seconds } }
        func advance(_ by: TimeInterval) { lock.withLock { seconds += by } }
    }

    func testABurstOfTheRateThenOneTokenPerInterval() {
        let clock = Clock()
        let limiter = MessageRateLimiter(perMinute: 6) { clock.now }  // one token per 10 s
        for _ in 0..<6 { XCTAssertNil(limiter.take("bob")) }
        XCTAssertEqual(limiter.take("bob"), 10)
        clock.advance(4)
        XCTAssertEqual(limiter.take("bob"), 6, "whole seconds until one token is back")
        clock.advance(5.5)
        XCTAssertEqual(limiter.take("bob"), 1, "0.5 s rounds up to 1")
        clock.advance(0.5)
        XCTAssertNil(limiter.take("bob"))
        XCTAssertEqual(limiter.take("bob"), 10)
    }

    func testRefillIsContinuousAndCappedAtTheRate() {
        let clock = Clock()
        let limiter = MessageRateLimiter(perMinute: 60) { clock.now }
        for _ in 0..<60 { XCTAssertNil(limiter.take("bob")) }
        XCTAssertNotNil(limiter.take("bob"))
        clock.advance(2.5)
        XCTAssertNil(limiter.take("bob"))
        XCTAssertNil(limiter.take("bob"))
        XCTAssertEqual(limiter.take("bob"), 1)
        clock.advance(3600)
        for _ in 0..<60 { XCTAssertNil(limiter.take("bob")) }
        XCTAssertNotNil(limiter.take("bob"), "an idle hour refills to the capacity, not past it")
    }

    func testEachUserHasABucket() {
        let clock = Clock()
        let limiter = MessageRateLimiter(perMinute: 1) { clock.now }
        XCTAssertNil(limiter.take("bob"))
        XCTAssertEqual(limiter.take("bob"), 60)
        XCTAssertNil(limiter.take("carol"))
    }

    func testAClockThatStepsBackMakesNoTokens() {
        var bucket = TokenBucket(capacity: 1, perMinute: 1, now: 100)
        XCTAssertNil(bucket.take(now: 100))
        XCTAssertEqual(bucket.take(now: 50), 60)
        XCTAssertEqual(bucket.take(now: 130), 30)
    }

    func testConcurrentTakesNeverLetMoreThanTheCapacityThrough() async {
        let limiter = MessageRateLimiter(perMinute: 50) { 0 }
        let granted = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<400 { group.addTask { limiter.take("bob") == nil } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        XCTAssertEqual(granted, 50)
    }

    func testTheNextUTCMidnight() {
        let noon = Date(timeIntervalSince1970: 20_000 * 86_400 + 43_200)
        XCTAssertEqual(Quotas.nextUTCMidnight(after: noon), Date(timeIntervalSince1970: 20_001 * 86_400))
        let midnight = Date(timeIntervalSince1970: 20_000 * 86_400)
        XCTAssertEqual(Quotas.nextUTCMidnight(after: midnight), Date(timeIntervalSince1970: 20_001 * 86_400))
    }
}
