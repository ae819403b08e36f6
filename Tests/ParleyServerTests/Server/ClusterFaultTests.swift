import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

/// Faults under a running cluster: PostgreSQL stopped and started (every node answers 503
/// `store_unavailable`, sends nothing upstream, says so in `/api/health`, does not exit, and recovers
/// by itself; a reply running meanwhile ends stored in full), and a node started during a storm of
/// replies (it takes none of them over, streams every one of them exactly, and starts its own).
final class ClusterFaultTests: XCTestCase {
    func testPostgresStoppedAndStartedUnderTwoNodes() async throws {
        let shared = try ClusterServices()
        let directory = URL(fileURLWithPath: "/tmp/parley-pg-" + UUID().uuidString.prefix(8).lowercased())
        defer { try? FileManager.default.removeItem(at: directory) }
        let own = try PostgresTestServer(directory: directory)
        defer { own.stop() }
        let upstream = try startUpstream()
        let services = ClusterServices(postgres: own.url, redis: shared.redis)
        let settings = try clusterSettings(services, ["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1",
                                                      "PARLEY_OPENAI_MODELS": "fake", "PARLEY_LEASE_SECONDS": "2"])
        let a = try startParley(settings)
        let b = try startParley(settings)
        let finish = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(["Vor ", "dem ", "Ausfall, ", "nach ", "dem ", "Ausfall ✓"],
                                                                        delayMilliseconds: 10), finish: finish))
        let id = try await a.conversation(["model": "openai:fake"])
        let (_, assistant) = try await a.send(id, "go")
        // A tab on B, open before the outage (opening one needs the store).
        let attached = FakeUpstream.Gate()
        async let tab = b.events(assistant, mode: "text", attached: attached, timeout: 60)
        let isAttached = await attached.waitUntilOpen()
        XCTAssertTrue(isAttached)
        _ = try await a.events(assistant, mode: "text", until: { $0.contains { $0.data.contains("Ausfall ✓") } })

        own.stop()
        for node in [a, b] {
            let listed = try await node.call("GET", "/api/conversations")
            XCTAssertEqual(listed.status, 503, listed.text)
            XCTAssertEqual(listed.errorCode, "store_unavailable")
            XCTAssertEqual(listed.headers["retry-after"], "2")
            let sent = try await node.call("POST", "/api/conversations/\(id)/messages", json: ["content": "more"])
            XCTAssertEqual(sent.status, 503, sent.text)
            let health = try await node.call("GET", "/api/health")
            XCTAssertEqual(health.status, 503)
            XCTAssertEqual(health.json["down"] as? [String], ["store"])
        }
        XCTAssertEqual(upstream.requests.count, 1, "nothing more goes upstream while the store is down")
        // The upstream ends while the store is down: the end waits for the store, holding the reply's
        // lease for longer than a lease lasts, so no node takes it over.
        finish.open()
        try await Task.sleep(for: .seconds(3))

        try own.start()
        for node in [a, b] {
            let back = try await Deadline(.seconds(15)).wait(every: .milliseconds(200)) {
                try await node.call("GET", "/api/conversations/\(id)").status == 200
            }
            XCTAssertTrue(back, "each node answers again by itself once PostgreSQL is back")
            let health = try await node.call("GET", "/api/health")
            XCTAssertEqual(health.status, 200)
        }
        let seen = try await tab
        XCTAssertEqual(seen.text, "Vor dem Ausfall, nach dem Ausfall ✓", "the tab open through the outage: every character once")
        XCTAssertEqual(seen.done?["status"] as? String, "complete")
        let stored = try await b.finished(assistant)
        XCTAssertEqual(stored["content"] as? String, "Vor dem Ausfall, nach dem Ausfall ✓", "the reply is stored in full")
        XCTAssertEqual(stored["status"] as? String, "complete")
        XCTAssertEqual(upstream.requests.count, 1, "no takeover, no second call")
        upstream.enqueue(UpstreamStreams.complete(["Wieder ", "da ✓"]))
        let (_, next) = try await b.send(id, "again")
        let again = try await a.events(next, mode: "text")
        XCTAssertEqual(again.text, "Wieder da ✓")
    }

    func testANodeStartedDuringAStormTakesNothingOverAndStreamsEveryReply() async throws {
        let services = try ClusterServices()
        let upstream = try startUpstream { request in
            let body = String(decoding: request.body, as: UTF8.self)
            let number = body.range(of: "reply ", options: .backwards).map { body[$0.upperBound...].prefix { $0.isNumber } } ?? "?"
            return UpstreamStreams.complete((1...12).map { "r\(number)·\($0) " }, delayMilliseconds: 60)
        }
        let settings = try clusterSettings(services, ["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1",
                                                      "PARLEY_OPENAI_MODELS": "fake", "PARLEY_LEASE_SECONDS": "2",
                                                      "PARLEY_MAX_GENERATIONS_PER_USER": "100"])
        let a = try startParley(settings)
        let b = try startParley(settings)
        let count = 24
        var replies: [(String, String)] = []
        for index in 0..<count {
            let node = index.isMultiple(of: 2) ? a : b
            let id = try await node.conversation(["model": "openai:fake"])
            let (_, assistant) = try await node.send(id, "reply \(index)")
            replies.append((assistant, (1...12).map { "r\(index)·\($0) " }.joined()))
        }

        let c = try startParley(settings)
        // C streams replies it does not run, from the snapshot, while they are running.
        let reads = try await withThrowingTaskGroup(of: (Int, StreamRead).self) { group in
            for (index, reply) in replies.enumerated() {
                group.addTask { (index, try await c.events(reply.0, mode: "text", timeout: 30)) }
            }
            var reads: [Int: StreamRead] = [:]
            for try await (index, read) in group { reads[index] = read }
            return reads
        }
        for (index, reply) in replies.enumerated() {
            let read = try XCTUnwrap(reads[index])
            XCTAssertEqual(read.text, reply.1, "reply \(index) seen on the new node")
            XCTAssertEqual(read.done?["status"] as? String, "complete")
        }
        let mine = try await c.conversation(["model": "openai:fake"])
        let (_, own) = try await c.send(mine, "reply 99")
        let ownRead = try await a.events(own, mode: "text")
        XCTAssertEqual(ownRead.text, (1...12).map { "r99·\($0) " }.joined(), "the new node runs its own replies")

        // Longer than a lease after the storm: nothing was taken over, nothing continued.
        try await Task.sleep(for: .seconds(2.5))
        for (index, reply) in replies.enumerated() {
            let stored = try await c.message(reply.0)
            XCTAssertEqual(stored["status"] as? String, "complete", "reply \(index)")
            XCTAssertEqual(stored["content"] as? String, reply.1, "reply \(index)")
        }
        XCTAssertEqual(upstream.requests.count, count + 1, "one upstream call per reply: no takeover")
    }
}
