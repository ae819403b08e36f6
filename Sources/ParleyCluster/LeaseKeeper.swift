import Foundation
import ParleyAPI
import ParleyGeneration
import ParleyRedis
import ParleyStore
import Synchronization

/// Each live reply's lease (node id and deadline, in Redis), renewed every second by the node that runs
/// it; and the watch, on every node, every half second, for replies whose node died: a reply still
/// `streaming` in the store whose run is known in Redis but whose lease has expired is won by one node
/// with `SET NX` (compare-and-set: exactly one node wins) and taken over there (`Generations.takeOver`):
/// continued (PARLEY_FAILOVER=continue) or ended `interrupted`.
///
/// The renewal re-creates a lease that vanished (Redis restarted) but never takes one another node
/// holds. A reply whose run Redis does not know either (Redis lost its keys, or the run is starting) is
/// taken only when still so after a renewal period: its node, if alive, has set its lease again by then.
package final class LeaseKeeper: Sendable {
    let relay: RedisReplyRelay
    let store: Store
    let generations: Generations
    let lease: Duration
    let continuing: Bool
    /// How often the watch looks; renewals come every second look or so.
    let every: Duration
    private let stopped = Atomic<Bool>(false)
    /// Replies seen `streaming` without a lease, and when first.
    private let missing = Mutex<[String: ContinuousClock.Instant]>([:])

    package init(relay: RedisReplyRelay, store: Store, generations: Generations, lease: Duration, continuing: Bool,
                 every: Duration = .milliseconds(500)) {
        self.relay = relay
        self.store = store
        self.generations = generations
        self.lease = lease
        self.continuing = continuing
        self.every = every
    }

    package func start() {
        Task { [self] in
            var renewedAt = ContinuousClock.now - .seconds(10)
            while !stopped.load(ordering: .relaxed) {
                if ContinuousClock.now - renewedAt >= .seconds(1) {
                    renewedAt = .now
                    await renew()
                }
                await watch()
                try? await Task.sleep(for: every)
            }
        }
    }

    package func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    /// Renews the lease of every reply this node runs, and its slot among its owner's live replies.
    func renew() async {
        let live = await generations.liveReplies
        guard !live.isEmpty else { return }
        let keys = live.map { relay.keys.lease($0.messageID) } + live.map { relay.keys.live($0.owner) }
        let arguments = [RedisArgument(relay.nodeID), RedisArgument(max(1, lease.milliseconds)), RedisArgument(live.count)]
            + live.map { RedisArgument($0.messageID) }
        _ = try? relay.shared.counting { connection throws(RedisError) in
            try connection.eval(Self.renewScript, keys: keys, arguments: arguments)
        }
    }

    /// Looks for replies whose node died, and takes over those this node wins.
    func watch() async {
        guard let streaming = try? store.streamingReplies(), !streaming.isEmpty else {
            missing.withLock { $0.removeAll() }
            return
        }
        let live = Set(await generations.liveReplies.map(\.messageID))
        let candidates = streaming.filter { !live.contains($0.messageID) }
        guard !candidates.isEmpty else {
            missing.withLock { $0.removeAll() }
            return
        }
        let commands = candidates.flatMap { reply -> [[RedisArgument]] in
            [["EXISTS", RedisArgument(relay.keys.lease(reply.messageID))],
             ["EXISTS", RedisArgument(relay.keys.run(reply.messageID))]]
        }
        guard let replies = try? relay.shared.counting({ connection throws(RedisError) in try connection.pipeline(commands) }),
              replies.count == commands.count else { return }
        let now = ContinuousClock.now
        var due: [StreamingReply] = []
        missing.withLock { missing in
            var seen: [String: ContinuousClock.Instant] = [:]
            for (index, reply) in candidates.enumerated() where replies[2 * index].integer == 0 {
                // Its run is known and its lease is gone: the node that ran it stopped renewing. Neither
                // known: Redis lost its keys (a restart) or the run has not written them yet: only once
                // still so after a renewal period (a live node sets its lease again within one).
                let runKnown = replies[2 * index + 1].integer == 1
                let first = missing[reply.messageID] ?? now
                seen[reply.messageID] = first
                if runKnown || now - first >= .milliseconds(1_100) { due.append(reply) }
            }
            missing = seen
        }
        for reply in due where Self.win(reply.messageID, relay: relay, lease: lease) {
            missing.withLock { _ = $0.removeValue(forKey: reply.messageID) }
            let seen = relay.seenText(messageID: reply.messageID)
            Log.info("failover: node \(relay.nodeID) takes over reply \(reply.messageID) (its lease is gone: its node died or handed it over)")
            await generations.takeOver(reply, seen: seen, continuing: continuing)
        }
    }

    /// `SET lease node NX PX`: true for the one node that wins the reply.
    static func win(_ messageID: String, relay: RedisReplyRelay, lease: Duration) -> Bool {
        let key = RedisArgument(relay.keys.lease(messageID))
        let arguments: [RedisArgument] = ["SET", key, RedisArgument(relay.nodeID), "NX", "PX",
                                          RedisArgument(max(1, lease.milliseconds))]
        let reply = try? relay.shared.counting { connection throws(RedisError) in try connection.command(arguments) }
        return reply == .status("OK")
    }

    /// KEYS: the leases of this node's N replies (ARGV[3]), then their owners' slot sets; ARGV: node id,
    /// lease (ms), N, then the N message ids. A lease that is this node's or gone is set again; one
    /// another node holds is left alone. Each reply's slot lapses a lease from now.
    static let renewScript = """
        local count = tonumber(ARGV[3])
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
        for index = 1, count do
            local key = KEYS[index]
            local owner = redis.call('GET', key)
            if owner == false or owner == ARGV[1] then redis.call('SET', key, ARGV[1], 'PX', ARGV[2]) end
            local slots = KEYS[count + index]
            redis.call('ZADD', slots, now + tonumber(ARGV[2]), ARGV[3 + index])
            redis.call('PEXPIRE', slots, ARGV[2])
        end
        return 0
        """
}
