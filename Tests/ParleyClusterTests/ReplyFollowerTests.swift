import Foundation
@testable import ParleyCluster
import ParleyGeneration
import ParleyRedis
import Synchronization
import ParleyTestSupport
import XCTest

/// The follower blocks on the activity stream and reads only the replies named there: node B follows
/// replies node A publishes, every event once and in order, many replies at once; and an entry whose
/// activity hint never came (trimmed, or a publisher cut between the two) still arrives, from the read
/// of every followed stream after a quiet block.
final class ReplyFollowerTests: XCTestCase {
    private func relays() throws -> (RedisReplyRelay, RedisReplyRelay) {
        let url = try TestRedis.url()
        let prefix = TestRedis.prefix()
        let (a, b) = (RedisReplyRelay(shared: SharedState(url: url, prefix: prefix, poolSize: 2), retain: .seconds(30), nodeID: "node-a"),
                      RedisReplyRelay(shared: SharedState(url: url, prefix: prefix, poolSize: 2), retain: .seconds(30), nodeID: "node-b"))
        for relay in [a, b] {
            relay.start(onStop: { _ in }, onLost: { _ in })
            addTeardownBlock { relay.stop() }
        }
        return (a, b)
    }

    private func deltas(_ ids: ClosedRange<Int64>, of reply: Int) -> [GenerationEvent] {
        ids.map { GenerationEvent(id: $0, payload: .delta("r\(reply)·\($0) ")) }
    }

    private func text(_ events: [GenerationEvent]) -> String {
        events.map { event in
            if case .delta(let text) = event.payload { return text }
            return "[\(event.id)]"
        }.joined()
    }

    func testManyRepliesPublishedOnOneNodeReachAnotherExactlyOnce() async throws {
        let (a, b) = try relays()
        let received = (0..<40).map { _ in Received() }
        for reply in 0..<40 { a.begin(messageID: "m\(reply)", baseID: 100, events: []) }
        for (reply, sink) in received.enumerated() {
            let follow = await b.follow(messageID: "m\(reply)", after: nil, waiting: true) { sink.add($0) }
            guard case .following = follow else { return XCTFail("not following m\(reply): \(follow)") }
        }
        for step in Int64(0)..<10 {
            for reply in 0..<40 { a.publish(messageID: "m\(reply)", deltas((101 + step * 3)...(103 + step * 3), of: reply)) }
            try await Task.sleep(for: .milliseconds(5))
        }
        for (reply, sink) in received.enumerated() {
            let expected = text(deltas(101...130, of: reply))
            let arrived = await Deadline(.seconds(10)).wait(every: .milliseconds(20)) { sink.events.count >= 30 }
            XCTAssertTrue(arrived, "m\(reply): \(sink.events.count) of 30")
            XCTAssertEqual(text(sink.events), expected, "m\(reply)")
        }
    }

    func testAnEntryWhoseActivityHintIsMissingStillArrives() async throws {
        let (a, b) = try relays()
        a.begin(messageID: "quiet", baseID: 10, events: [])
        let sink = Received()
        _ = await b.follow(messageID: "quiet", after: nil, waiting: true) { sink.add($0) }
        a.publish(messageID: "quiet", deltas(11...11, of: 0))
        let first = await Deadline(.seconds(5)).wait(every: .milliseconds(10)) { sink.events.count == 1 }
        XCTAssertTrue(first)
        // Written straight into the reply's stream, as a publisher would, but with no activity entry.
        let fields = ReplyEventCodec.fields(.delta("ohne Hinweis ✓"))
        var command: [RedisArgument] = ["XADD", RedisArgument(a.keys.stream("quiet")), "12-0"]
        for field in fields { command += [RedisArgument(bytes: field.name), RedisArgument(bytes: field.value)] }
        _ = try a.shared.pool.withConnection { connection throws(RedisError) in try connection.command(command) }
        let second = await Deadline(.seconds(5)).wait(every: .milliseconds(20)) { sink.events.count == 2 }
        XCTAssertTrue(second, "read after the next quiet block")
        XCTAssertEqual(text(sink.events), "r0·11 ohne Hinweis ✓")
    }
}

/// What one subscriber was handed, from the follower's thread.
private final class Received: Sendable {
    private let all = Mutex<[GenerationEvent]>([])

    func add(_ events: [GenerationEvent]) -> Bool {
        all.withLock { $0 += events }
        return true
    }

    var events: [GenerationEvent] { all.withLock { $0 } }
}
