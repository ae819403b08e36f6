import Foundation
import ParleyAPI
import ParleyEvents
import ParleyGeneration
import ParleyRedis
import Synchronization

/// Replies' events through Redis Streams, so any node serves any reply's stream (issue 24): one stream
/// per message (entry `N-0` = event `N`, so an SSE id is a Redis position), written by the node that
/// runs the reply (`ReplyPublisher`) and read by one follower per node (`ReplyFollower`), the writer's
/// own subscribers included: a tab sees an event only once Redis holds it.
///
/// A subscriber with a Last-Event-ID inside the newest run is replayed from it; any other starts at the
/// run's beginning, whose first entry is its snapshot. A stop asked on a node that does not run the
/// reply goes to the node that does, through that node's own stream.
package final class RedisReplyRelay: ReplyRelay {
    let shared: SharedState
    /// This node's name in Redis (a run's `node`), new at every start.
    package let nodeID: String
    let keys: ReplyKeys
    private let publisher: ReplyPublisher
    private let follower: ReplyFollower
    private let stopped = Atomic<Bool>(false)

    /// How long a lease, or a slot of a user's live replies, lasts unless renewed (PARLEY_LEASE_SECONDS).
    let lease: Duration

    /// - Parameter retain: how long a stream is kept after its run's `done` (PARLEY_RETAIN_FINISHED_SECONDS).
    /// - Parameter lease: how long a run's lease lasts unless renewed (PARLEY_LEASE_SECONDS).
    package init(shared: SharedState, retain: Duration, lease: Duration = .seconds(5),
                 nodeID: String = RedisReplyRelay.newNodeID()) {
        self.shared = shared
        self.nodeID = nodeID
        self.lease = lease
        keys = ReplyKeys(shared: shared)
        publisher = ReplyPublisher(keys: keys, nodeID: nodeID, retain: retain, lease: lease)
        follower = ReplyFollower(keys: keys, nodeID: nodeID)
    }

    /// A random node id (12 hex digits).
    package static func newNodeID() -> String {
        String(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12)).lowercased()
    }

    /// Starts the writer and the reader; `onStop` is called with a message id another node asked this one
    /// to stop, `onLost` with one whose stream Redis lost while this node runs it (to publish it again).
    package func start(onStop: @escaping @Sendable (String) -> Void, onLost: @escaping @Sendable (String) -> Void) {
        publisher.start(onLost: onLost)
        follower.start(onStop: onStop)
    }

    /// Sends what is queued, then stops the writer and the reader (once; a second call does nothing).
    package func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        publisher.stop()
        follower.stop()
    }

    /// Gives up this node's leases of `messageIDs` (a graceful stop hands its replies over): each becomes
    /// `released` (for a lease's time), which another node takes at its next look, not after the lease's
    /// time and whatever the row's age. A lease another node holds is left alone.
    package func releaseLeases(_ messageIDs: [String]) {
        guard !messageIDs.isEmpty else { return }
        let keys = messageIDs.map(self.keys.lease)
        let nodeID = RedisArgument(nodeID)
        _ = try? shared.counting { connection throws(RedisError) in
            try connection.eval(Self.releaseScript, keys: keys, arguments: [nodeID, RedisArgument(max(1, lease.milliseconds))])
        }
    }

    /// KEYS: leases; ARGV[1]: this node, ARGV[2]: the lease (ms). Each lease this node holds becomes
    /// `released`.
    static let releaseScript = """
        for _, key in ipairs(KEYS) do
            if redis.call('GET', key) == ARGV[1] then redis.call('SET', key, '\(released)', 'PX', ARGV[2]) end
        end
        return 0
        """

    /// What a handed-over reply's lease holds until another node takes it.
    static let released = "released"

    /// Subscribers following through this node now (tests, logs).
    package var subscriberCount: Int { follower.subscriberCount }

    // MARK: - ReplyRelay

    package func begin(messageID: String, baseID: Int64, events: [GenerationEvent]) {
        publisher.enqueue(.begin(messageID: messageID, baseID: baseID, events: events))
    }

    package func publish(messageID: String, _ batch: [GenerationEvent]) {
        publisher.enqueue(.batch(messageID: messageID, events: batch))
    }

    package func follow(messageID: String, after lastEventID: Int64?, waiting: Bool,
                        deliver: @escaping @Sendable ([GenerationEvent]) -> Bool) async -> RelayFollow {
        let stream = RedisArgument(keys.stream(messageID))
        let commands: [[RedisArgument]] = [
            ["HGET", RedisArgument(keys.run(messageID)), "base"],
            ["XREVRANGE", stream, "+", "-", "COUNT", "1"],
        ]
        var start = RedisStreamID.zero
        if let replies = try? shared.counting({ connection throws(RedisError) in try connection.pipeline(commands) }),
           replies.count == 2 {
            let base = replies[0].text.flatMap { Int64($0) }
            let newest = replies[1].elements?.first.flatMap { try? RedisStreamEntry(reply: $0) }
            guard newest != nil || waiting else { return .absent }
            if let base { start = RedisStreamID(milliseconds: UInt64(max(0, base)), sequence: 0) }
            if let lastEventID, let newest, let last = newest.id.eventID ?? Int64(exactly: newest.id.milliseconds),
               lastEventID >= (base ?? 0), lastEventID <= last {
                // Inside the newest run: replayed exactly from there, or nothing more after its `done`.
                if lastEventID == last, ReplyEventCodec.event(newest)?.isDone == true { return .finished }
                start = RedisStreamID(milliseconds: UInt64(lastEventID), sequence: 0)
            }
        } else if !waiting {
            return .absent
        } else if let lastEventID {
            // Redis does not answer: the follower catches up once it does.
            start = RedisStreamID(milliseconds: UInt64(max(0, lastEventID)), sequence: 0)
        }
        let token = follower.add(messageID, after: start, deliver: deliver)
        wake()
        let follower = follower
        return .following(cancel: { follower.remove(token) })
    }

    package func requestStop(messageID: String) -> Bool {
        let nodeID = nodeID
        let keys = keys
        let asked = try? shared.counting { connection throws(RedisError) -> Bool in
            let owner = try connection.command(["HGET", RedisArgument(keys.run(messageID)), "node"]).text
            guard let owner, owner != nodeID else { return false }
            _ = try connection.command(["XADD", RedisArgument(keys.node(owner)), "MAXLEN", "~", "1000", "*",
                                        "op", "stop", "m", RedisArgument(messageID)])
            return true
        }
        return asked ?? false
    }

    package func lastEventID(messageID: String) -> Int64? {
        let stream = RedisArgument(keys.stream(messageID))
        guard let reply = try? shared.counting({ connection throws(RedisError) in
            try connection.command(["XREVRANGE", stream, "+", "-", "COUNT", "1"])
        }), let first = reply.elements?.first, let entry = try? RedisStreamEntry(reply: first) else { return nil }
        return Int64(exactly: entry.id.milliseconds)
    }

    package func admitLive(owner: String, key: String, limit: Int) throws -> Bool {
        let keys = [self.keys.live(owner)]
        let arguments = [RedisArgument(key), RedisArgument(limit), RedisArgument(max(1, lease.milliseconds))]
        let reply = try shared.counting { connection throws(RedisError) in
            try connection.eval(Self.admitScript, keys: keys, arguments: arguments)
        }
        return reply.integer == 1
    }

    package func moveLive(owner: String, from: String, to: String?) {
        let keys = [self.keys.live(owner)]
        let arguments = [RedisArgument(from), RedisArgument(to ?? ""), RedisArgument(max(1, lease.milliseconds))]
        // Best effort: a slot not moved or freed lapses by itself after a lease.
        _ = try? shared.counting { connection throws(RedisError) in
            try connection.eval(Self.moveScript, keys: keys, arguments: arguments)
        }
    }

    /// KEYS[1]: the user's slots; ARGV: the new slot, the limit, the lease (ms). 1 when taken, 0 when full.
    static let admitScript = """
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
        if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
        redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
        redis.call('PEXPIRE', KEYS[1], ARGV[3])
        return 1
        """

    /// KEYS[1]: the user's slots; ARGV: the slot, what it becomes ('' frees it), the lease (ms).
    static let moveScript = """
        local removed = redis.call('ZREM', KEYS[1], ARGV[1])
        if removed == 1 and ARGV[2] ~= '' then
            local time = redis.call('TIME')
            local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
            redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
            redis.call('PEXPIRE', KEYS[1], ARGV[3])
        end
        return removed
        """

    /// The answer and reasoning the newest run's subscribers were sent, exactly: its snapshot's, then
    /// every `delta` and `reasoning` after it. nil when the stream is gone or holds no snapshot for it.
    package func seenText(messageID: String) -> (content: String, reasoning: String)? {
        let stream = keys.stream(messageID)
        let run = RedisArgument(keys.run(messageID))
        return try? shared.counting { connection throws(RedisError) -> (content: String, reasoning: String)? in
            let base = try connection.command(["HGET", run, "base"]).text.flatMap { Int64($0) }
            var after = base.map { RedisStreamID(milliseconds: UInt64(max(0, $0)), sequence: 0) }
            var content: String?
            var reasoning = ""
            while true {
                let entries = try connection.xrange(stream, after: after, count: 1_000)
                for event in entries.compactMap(ReplyEventCodec.event) {
                    switch event.payload {
                    case .snapshot(let snapshot):
                        content = snapshot.content
                        reasoning = snapshot.reasoning
                    case .delta(let text): content? += text
                    case .reasoning(let text): reasoning += text
                    default: break
                    }
                }
                guard entries.count == 1_000, let last = entries.last else { break }
                after = last.id
            }
            return content.map { ($0, reasoning) }
        } ?? nil
    }

    /// Ends the follower's current wait, so a new subscriber is caught up now.
    private func wake() {
        let key = RedisArgument(keys.node(nodeID))
        _ = try? shared.counting { connection throws(RedisError) in
            try connection.command(["XADD", key, "MAXLEN", "~", "1000", "*", "op", "wake"])
        }
    }
}
