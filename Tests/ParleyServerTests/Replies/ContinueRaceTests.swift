import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// Stops and stream attaches racing a continue. A continue puts the stored row back to `streaming`
/// and registers the live generation; nothing may observe one without the other: a stop answered
/// after the continue started ends the reply `stopped` (its answer never says `streaming`), and a
/// stream attached meanwhile is never told `interrupted`.
final class ContinueRaceTests: XCTestCase {
    /// Rounds of continue + hammering; each is a few dozen requests.
    static let rounds = 25
    /// Concurrent clients per round, each alternating stop and stream attach.
    static let hammers = 4
    static let operationsPerHammer = 12

    /// What one hammering client saw.
    struct Seen: Sendable {
        var failures: [String] = []
        /// A stop answered with a state written after the round began: it stopped this round's run.
        var stoppedThisRun = false
    }

    func testStopsAndStreamsRacingAContinueNeverSeeTheGap() async throws {
        let upstream = try FakeUpstream { _ in UpstreamStreams.stalling(after: ["more "]) }
        let parley = try TestParley(upstream: upstream, ["PARLEY_FRAME_INTERVAL_MS": "0"])
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, assistant) = try await parley.send(id, "go")
        let first = try await parley.call("POST", "/api/messages/\(assistant)/stop")
        XCTAssertEqual(first.json["status"] as? String, "stopped", first.text)

        let base = parley.base
        var failures: [String] = []
        for round in 0..<Self.rounds {
            let before = try await parley.message(assistant)
            let beforeStamp = try XCTUnwrap(before["updated_at"] as? String)
            XCTAssertNotEqual(before["status"] as? String, "streaming", "round \(round) starts from a finished reply")

            async let continued = parley.call("POST", "/api/messages/\(assistant)/continue")
            let seen = try await withThrowingTaskGroup(of: Seen.self) { group in
                for hammer in 0..<Self.hammers {
                    group.addTask {
                        try await Blocking.run {
                            Self.hammer(base: base, messageID: assistant, startingWithStop: hammer % 2 == 0,
                                        roundStartedAfter: beforeStamp)
                        }
                    }
                }
                var all: [Seen] = []
                for try await one in group { all.append(one) }
                return all
            }
            let answer = try await continued
            XCTAssertEqual(answer.status, 200, "round \(round): \(answer.text)")
            failures += seen.flatMap(\.failures).map { "round \(round): \($0)" }
            if seen.contains(where: \.stoppedThisRun) {
                let now = try await parley.message(assistant)
                XCTAssertEqual(now["status"] as? String, "stopped",
                               "round \(round): a stop answered after the continue started did not end it")
            }
            let cleanup = try await parley.call("POST", "/api/messages/\(assistant)/stop")
            XCTAssertEqual(cleanup.json["status"] as? String, "stopped", "round \(round): \(cleanup.text)")
        }
        XCTAssertEqual(failures, [], "\(failures.count) wrong answers in \(Self.rounds) rounds")
        await parley.stop()
        upstream.shutdown()
    }

    /// One client: stops and stream attaches in turn, as fast as it can; blocking (own thread).
    private static func hammer(base: String, messageID: String, startingWithStop: Bool,
                               roundStartedAfter stamp: String) -> Seen {
        var seen = Seen()
        let client = TestHTTPClient()
        for index in 0..<operationsPerHammer {
            if (index % 2 == 0) == startingWithStop {
                guard let reply = try? client.request("POST", base + "/api/messages/\(messageID)/stop",
                                                      headers: [("Content-Type", "application/json")], timeout: 20),
                      let message = ExactJSON.parse(reply.body) else {
                    seen.failures.append("stop: no answer")
                    continue
                }
                let status = message["status"]?.string ?? "?"
                if status == "streaming" { seen.failures.append("stop answered status streaming") }
                if let updated = message["updated_at"]?.string, updated > stamp { seen.stoppedThisRun = true }
            } else {
                // Read until the first event: a live reply's stream stays open (the upstream stalls).
                guard let events = try? TestHTTPClient().readEvents(
                    base + "/api/messages/\(messageID)/stream?mode=text", limit: .timeout(20),
                    until: { !$0.isEmpty }).events else {
                    seen.failures.append("stream: no answer")
                    continue
                }
                for event in events {
                    let status = ExactJSON.parse(event.data)?["status"]?.string
                    if status == "interrupted" { seen.failures.append("stream \(event.type) said interrupted") }
                }
                if events.isEmpty { seen.failures.append("stream: no event") }
            }
        }
        return seen
    }
}
