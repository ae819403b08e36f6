import Foundation
import ParleyAPI
import ParleyGeneration
import ParleyRedis
import ParleyStore
import Synchronization

/// Each live reply's lease (node id and deadline, in Redis), renewed every second by the node that runs
/// it; and the watch, on every node, every half second, for replies whose node died: a reply still
/// `streaming` in the store whose run is known in Redis but whose lease has expired is won by one node
/// with a compare-and-set (a script: exactly one node wins) and taken over there (`Generations.takeOver`):
/// continued (PARLEY_FAILOVER=continue) or ended `interrupted`.
///
/// The renewal (a thread of its own) re-creates a lease that vanished (Redis restarted) but never takes
/// one another node holds: it reports those, and its node abandons them (fencing). A reply whose row was
/// written less than a lease ago is not judged (a busy node may not have published a new run yet); one
/// whose run Redis does not know either (Redis lost its keys, or the run is starting) is taken only when
/// still so after two renewal periods: its node, if alive, has set its lease again by then.
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
        // The renewal has a thread and a Redis connection of its own: neither a busy cooperative pool nor
        // the `Generations` actor (a storm of starts) nor a busy pool of connections may delay it past a
        // lease, which would let another node take over a reply still live here.
        let thread = Thread { [self] in
            let connection = relay.shared.pool.makeConnection()
            while !stopped.load(ordering: .relaxed) {
                let began = ContinuousClock.now
                renew(on: connection)
                let rest = Self.renewal - (ContinuousClock.now - began)
                if rest > .zero { Thread.sleep(forTimeInterval: Double(rest.milliseconds) / 1000) }
            }
            connection.close()
        }
        thread.name = "parley-lease-renewal"
        thread.start()
        Task { [self] in
            while !stopped.load(ordering: .relaxed) {
                await watch()
                try? await Task.sleep(for: every)
            }
        }
    }

    /// How often this node renews its leases.
    static let renewal = Duration.seconds(1)

    package func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    /// Renews the lease of every reply this node runs, and its slot among its owner's live replies; the
    /// replies whose lease another node holds now are abandoned here (`Generations.leasesLost`).
    func renew(on connection: RedisConnection) {
        let live = generations.liveSet.all
        guard !live.isEmpty else { return }
        let keys = live.map { relay.keys.lease($0.messageID) } + live.map { relay.keys.live($0.owner) }
        let arguments = [RedisArgument(relay.nodeID), RedisArgument(max(1, lease.milliseconds)), RedisArgument(live.count)]
            + live.map { RedisArgument($0.messageID) } + live.map { RedisArgument($0.registered ? "1" : "0") }
        do throws(RedisError) {
            let reply = try connection.eval(Self.renewScript, keys: keys, arguments: arguments)
            let lost = (reply.elements ?? []).compactMap(\.text)
            guard !lost.isEmpty else { return }
            Log.info("failover: node \(relay.nodeID) lost the lease of \(lost.count) reply(s) to another node (renewed too late): abandoned here")
            let generations = generations
            Task { await generations.leasesLost(lost) }
        } catch {
            relay.shared.noteFailure(error)
            connection.close()
        }
    }

    /// Looks for replies whose node died, and takes over those this node wins.
    func watch() async {
        guard let streaming = try? store.streamingReplies(), !streaming.isEmpty else {
            missing.withLock { $0.removeAll() }
            return
        }
        let candidates = streaming.filter { !generations.liveSet.contains($0.messageID) }
        guard !candidates.isEmpty else {
            missing.withLock { $0.removeAll() }
            return
        }
        let commands = candidates.flatMap { reply -> [[RedisArgument]] in
            [["GET", RedisArgument(relay.keys.lease(reply.messageID))],
             ["EXISTS", RedisArgument(relay.keys.run(reply.messageID))]]
        }
        guard let replies = try? relay.shared.counting({ connection throws(RedisError) in try connection.pipeline(commands) }),
              replies.count == commands.count else { return }
        let now = ContinuousClock.now
        let written = Date()
        var due: [StreamingReply] = []
        missing.withLock { missing in
            var seen: [String: ContinuousClock.Instant] = [:]
            for (index, reply) in candidates.enumerated() {
                let holder = replies[2 * index].text
                // Handed over by its node (a graceful stop): taken at once.
                if holder == RedisReplyRelay.released {
                    due.append(reply)
                    continue
                }
                guard holder == nil else { continue }
                // A row written less than a lease ago (a start, a progress save) is not judged: a node busy
                // with a storm of starts may not have published the run or registered it yet.
                guard written.timeIntervalSince(reply.updatedAt) >= Double(lease.milliseconds) / 1000 else { continue }
                // Its run is known and its lease is gone: the node that ran it stopped renewing. Neither
                // known: Redis lost its keys (a restart) or the run has not written them yet: only once
                // still so after two renewal periods (a live node sets its lease again within one).
                let runKnown = replies[2 * index + 1].integer == 1
                let first = missing[reply.messageID] ?? now
                seen[reply.messageID] = first
                if runKnown || now - first >= Self.renewal * 2 { due.append(reply) }
            }
            missing = seen
        }
        // A node that is stopping (its keeper stopped before it hands its replies over) takes nothing,
        // not even in a look that was under way: its own handed-over replies would end here.
        for reply in due where !stopped.load(ordering: .relaxed) && Self.win(reply.messageID, relay: relay, lease: lease) {
            missing.withLock { _ = $0.removeValue(forKey: reply.messageID) }
            let seen = relay.seenText(messageID: reply.messageID)
            Log.info("failover: node \(relay.nodeID) takes over reply \(reply.messageID) (its lease is gone: its node died or handed it over)")
            await generations.takeOver(reply, seen: seen, continuing: continuing)
        }
    }

    /// Compare-and-set of the lease, from gone or `released` to this node: true for the one node that
    /// wins the reply (Redis runs a script alone, so of nodes racing exactly one finds it free).
    static func win(_ messageID: String, relay: RedisReplyRelay, lease: Duration) -> Bool {
        let arguments = [RedisArgument(relay.nodeID), RedisArgument(max(1, lease.milliseconds))]
        let reply = try? relay.shared.counting { connection throws(RedisError) in
            try connection.eval(Self.winScript, keys: [relay.keys.lease(messageID)], arguments: arguments)
        }
        return reply?.integer == 1
    }

    /// KEYS[1]: the lease; ARGV: this node, the lease (ms). 1 when it was free and is now this node's.
    static let winScript = """
        local holder = redis.call('GET', KEYS[1])
        if holder ~= false and holder ~= '\(RedisReplyRelay.released)' then return 0 end
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
        return 1
        """

    /// KEYS: the leases of this node's N replies (ARGV[3]), then their owners' slot sets; ARGV: node id,
    /// lease (ms), N, the N message ids, then N flags ('1': registered, its slot is renewed too; '0': a
    /// start whose slot is still its reservation's). A lease that is this node's or gone is set again,
    /// with the reply's slot (lapsing a lease from now); one another node holds is left alone, and its
    /// message id returned: that node took the reply over.
    static let renewScript = """
        local count = tonumber(ARGV[3])
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
        local lost = {}
        for index = 1, count do
            local key = KEYS[index]
            local owner = redis.call('GET', key)
            if owner == false or owner == ARGV[1] then
                redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
                if ARGV[3 + count + index] == '1' then
                    local slots = KEYS[count + index]
                    redis.call('ZADD', slots, now + tonumber(ARGV[2]), ARGV[3 + index])
                    redis.call('PEXPIRE', slots, ARGV[2])
                end
            else
                table.insert(lost, ARGV[3 + index])
            end
        end
        return lost
        """
}
