import Foundation
import ParleyAPI
import ParleyEvents
import ParleyGeneration
import ParleyRedis
import Synchronization

/// The one reader per node of the reply streams its subscribers follow, on a connection and a thread
/// of its own. It blocks (`XREAD BLOCK`) on two streams only: the node's own (stops asked of this node,
/// and wake-ups when a subscriber is added) and the cluster's activity stream, where publishers name
/// each reply that got entries; then it reads, without waiting, just the followed streams named. So a
/// wake-up costs what moved, not every followed stream (which one `XREAD` over all of them did: at
/// hundreds of streams, most of the node's and Redis's work). A new subscriber is first caught up with
/// `XRANGE` from its position; each gets only entries past its own position, so none is sent twice.
/// The activity is a hint, the reply streams the record: after a quiet block, a failure or an activity
/// backlog every followed stream is read once, so a trimmed hint delays an entry, never loses it.
/// After a Redis failure it reconnects every half second and goes on from each subscriber's position.
final class ReplyFollower: Sendable {
    private struct Subscriber {
        let messageID: String
        var after: RedisStreamID
        let deliver: @Sendable ([GenerationEvent]) -> Bool
        var caughtUp = false
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        /// The tokens following each message.
        var byMessage: [String: Set<Int>] = [:]
        var nextToken = 0
    }

    /// Entries read once, decoded once: subscribers at the same position get the same array, so
    /// `BatchFrameCache` encodes a frame once for all of them, as on one node.
    private struct Decoded {
        let ids: [RedisStreamID]
        let events: [GenerationEvent?]
        let all: [GenerationEvent]

        init(_ entries: [RedisStreamEntry]) {
            ids = entries.map(\.id)
            events = entries.map(ReplyEventCodec.event)
            all = events.compactMap { $0 }
        }

        /// The events past `after`: the shared array when every entry is.
        func after(_ position: RedisStreamID) -> [GenerationEvent] {
            guard let first = ids.first, first <= position else { return all }
            return zip(ids, events).compactMap { $0.0 > position ? $0.1 : nil }
        }
    }

    let keys: ReplyKeys
    let nodeID: String
    let block: Duration
    /// What to do with a stop asked of this node (the message id); set once by `start`.
    private let onStop = Mutex<(@Sendable (String) -> Void)?>(nil)
    private let state = Mutex(State())
    private let stopped = Atomic<Bool>(false)

    init(keys: ReplyKeys, nodeID: String, block: Duration = .milliseconds(1_000)) {
        self.keys = keys
        self.nodeID = nodeID
        self.block = block
    }

    func start(onStop: @escaping @Sendable (String) -> Void) {
        self.onStop.withLock { $0 = onStop }
        let thread = Thread { [self] in self.run() }
        thread.name = "parley-reply-follower"
        thread.start()
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    /// Adds a subscriber that gets the entries of `messageID`'s stream past `after`; the token removes it.
    func add(_ messageID: String, after: RedisStreamID, deliver: @escaping @Sendable ([GenerationEvent]) -> Bool) -> Int {
        state.withLock { state in
            let token = state.nextToken
            state.nextToken += 1
            state.subscribers[token] = Subscriber(messageID: messageID, after: after, deliver: deliver)
            state.byMessage[messageID, default: []].insert(token)
            return token
        }
    }

    func remove(_ token: Int) {
        state.withLock { state in
            guard let gone = state.subscribers.removeValue(forKey: token) else { return }
            state.byMessage[gone.messageID]?.remove(token)
            if state.byMessage[gone.messageID]?.isEmpty == true { state.byMessage[gone.messageID] = nil }
        }
    }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    private func run() {
        let connection = keys.shared.pool.makeConnection()
        let own = keys.node(nodeID)
        let activity = keys.activity
        var ownAfter: RedisStreamID?
        var activityAfter: RedisStreamID?
        // Whether to read every followed stream once: at the start, after a failure, after a quiet
        // block and after a full activity read (entries may have been trimmed before this node read them).
        var sweep = true
        while !stopped.load(ordering: .relaxed) {
            do throws(RedisError) {
                if ownAfter == nil { ownAfter = try newest(own, on: connection) }
                if activityAfter == nil { activityAfter = try newest(activity, on: connection) }
                try catchUp(on: connection)
                if sweep {
                    sweep = false
                    try read(positions(), on: connection)
                }
                let batches = try connection.xread([(own, ownAfter ?? .zero), (activity, activityAfter ?? .zero)],
                                                   block: block, count: Self.activityRead)
                if batches.isEmpty { sweep = true }
                var moved = Set<String>()
                for batch in batches {
                    for entry in batch.entries {
                        if batch.key == own {
                            ownAfter = entry.id
                            control(entry)
                        } else {
                            activityAfter = entry.id
                            if let message = entry.value("m") { moved.insert(String(decoding: message, as: UTF8.self)) }
                        }
                    }
                    if batch.key == activity, batch.entries.count == Self.activityRead { sweep = true }
                }
                if !moved.isEmpty { try read(positions().filter { moved.contains($0.key) }, on: connection) }
            } catch {
                keys.shared.noteFailure(error)
                connection.close()
                (ownAfter, activityAfter, sweep) = (nil, nil, true)
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
        connection.close()
    }

    /// Activity entries read at most per wake-up (more waiting: every followed stream is read once).
    private static let activityRead = 4_096
    /// Entries of one stream read at most per call (more: read again from the last).
    private static let streamRead = 512

    /// Reads what each of `followed` holds past its position (without waiting) and hands it out.
    private func read(_ followed: [String: RedisStreamID], on connection: RedisConnection) throws(RedisError) {
        var pending = followed.map { (key: keys.stream($0.key), after: $0.value) }
        while !pending.isEmpty {
            var again: [(key: String, after: RedisStreamID)] = []
            for batch in try connection.xread(pending, block: nil, count: Self.streamRead) {
                guard let messageID = messageID(of: batch.key) else { continue }
                dispatch(batch.entries, of: messageID)
                if batch.entries.count == Self.streamRead, let last = batch.entries.last { again.append((batch.key, last.id)) }
            }
            pending = again
        }
    }

    /// Each followed message with the lowest position among its caught-up subscribers.
    private func positions() -> [String: RedisStreamID] {
        state.withLock { state in
            var lowest: [String: RedisStreamID] = [:]
            for subscriber in state.subscribers.values where subscriber.caughtUp {
                lowest[subscriber.messageID] = min(lowest[subscriber.messageID] ?? subscriber.after, subscriber.after)
            }
            return lowest
        }
    }

    /// Reads, for every subscriber added since, what its stream holds past its position.
    private func catchUp(on connection: RedisConnection) throws(RedisError) {
        let waiting = state.withLock { $0.subscribers.filter { !$0.value.caughtUp } }
        for (token, subscriber) in waiting {
            var after = subscriber.after
            while true {
                let entries = try connection.xrange(keys.stream(subscriber.messageID), after: after, count: 512)
                if !entries.isEmpty { deliver(Decoded(entries), to: token) }
                guard entries.count == 512, let last = entries.last else { break }
                after = last.id
            }
            state.withLock { $0.subscribers[token]?.caughtUp = true }
        }
    }

    private func dispatch(_ entries: [RedisStreamEntry], of messageID: String) {
        let tokens = state.withLock { state in
            (state.byMessage[messageID] ?? []).filter { state.subscribers[$0]?.caughtUp == true }
        }
        guard !tokens.isEmpty else { return }
        let decoded = Decoded(entries)
        for token in tokens { deliver(decoded, to: token) }
    }

    /// Hands `token`'s subscriber the entries past its position; drops it when it has gone or got `done`.
    private func deliver(_ decoded: Decoded, to token: Int) {
        guard let subscriber = state.withLock({ $0.subscribers[token] }),
              let last = decoded.ids.last, last > subscriber.after else { return }
        let events = decoded.after(subscriber.after)
        state.withLock { $0.subscribers[token]?.after = last }
        if !subscriber.deliver(events) || events.contains(where: \.isDone) {
            remove(token)
        }
    }

    private func control(_ entry: RedisStreamEntry) {
        guard entry.value("op").map({ String(decoding: $0, as: UTF8.self) }) == "stop",
              let message = entry.value("m").map({ String(decoding: $0, as: UTF8.self) }) else { return }
        onStop.withLock { $0 }?(message)
    }

    private func messageID(of key: String) -> String? {
        let prefix = keys.stream("")
        guard key.hasPrefix(prefix) else { return nil }
        return String(key.dropFirst(prefix.count))
    }

    private func newest(_ key: String, on connection: RedisConnection) throws(RedisError) -> RedisStreamID {
        let reply = try connection.command(["XREVRANGE", RedisArgument(key), "+", "-", "COUNT", "1"])
        guard let first = reply.elements?.first else { return .zero }
        return try RedisStreamEntry(reply: first).id
    }
}
