import Foundation
import ParleyAPI
import ParleyEvents
import ParleyGeneration
import ParleyPrimitives
import ParleyRedis
import Synchronization

/// Writes every reply this node runs to its Redis stream, in order, on a thread of its own: batches
/// are queued by the generations (never blocking them) and sent as one pipeline per wake-up. A failed
/// pipeline is sent again after a pause until Redis takes it: appends carry explicit ids, so one that
/// had landed is refused as a duplicate and nothing is written twice.
final class ReplyPublisher: Sendable {
    enum Job: Sendable {
        case begin(messageID: String, baseID: Int64, events: [GenerationEvent])
        case batch(messageID: String, events: [GenerationEvent])

        var messageID: String {
            switch self {
            case .begin(let messageID, _, _), .batch(let messageID, _): messageID
            }
        }
    }

    let keys: ReplyKeys
    let nodeID: String
    /// How long a stream is kept after its run's `done` (PARLEY_RETAIN_FINISHED_SECONDS).
    let retain: Duration
    /// How long a lease lasts unless renewed (PARLEY_LEASE_SECONDS).
    let lease: Duration
    private let queue = Mutex<[Job]>([])
    private let signal = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)
    /// Signalled when the thread has sent what was queued before `stop` and ended.
    private let ended = DispatchSemaphore(value: 0)
    /// Told, after Redis came back without a live run's keys (it restarted and lost them), which message
    /// must publish its state again; set once before `start`.
    private let onLost = Mutex<(@Sendable (String) -> Void)?>(nil)

    init(keys: ReplyKeys, nodeID: String, retain: Duration, lease: Duration) {
        self.keys = keys
        self.nodeID = nodeID
        self.retain = retain
        self.lease = lease
    }

    func enqueue(_ job: Job) {
        let wasEmpty = queue.withLock { queue in
            queue.append(job)
            return queue.count == 1
        }
        // The publisher takes the whole queue at each wake-up: only the first job of a queue wakes it
        // (a futex wake per frame of every reply was most of a busy node's scheduling).
        if wasEmpty { signal.signal() }
    }

    func start(onLost: @escaping @Sendable (String) -> Void) {
        self.onLost.withLock { $0 = onLost }
        let thread = Thread { [self] in self.run() }
        thread.name = "parley-reply-publisher"
        thread.start()
    }

    /// Sends what is queued (the `done`s of a shutdown's replies), then ends; waits at most `drain` for it.
    func stop(drain: Duration = .seconds(2)) {
        stopped.store(true, ordering: .relaxed)
        signal.signal()
        _ = ended.wait(timeout: .now() + .milliseconds(Int(drain.milliseconds)))
    }

    private func run() {
        let connection = keys.shared.pool.makeConnection()
        /// Per message: the last logged event id and how many provisional entries follow it.
        var positions: [String: (logged: Int64, provisional: UInt64)] = [:]
        /// Set by a failure: once Redis answers again, the live runs' keys are checked.
        var recovering = false
        defer { ended.signal() }
        while true {
            let jobs = queue.withLock { queue in
                let taken = queue
                queue.removeAll(keepingCapacity: true)
                return taken
            }
            if jobs.isEmpty {
                if stopped.load(ordering: .relaxed) { break }
                signal.wait()
                continue
            }
            let commands = self.commands(for: jobs, positions: &positions)
            // Sent once whatever happens; sent again after a failure until Redis takes it or the node stops.
            var attempt = 0
            while attempt == 0 || !stopped.load(ordering: .relaxed) {
                attempt += 1
                do throws(RedisError) {
                    let connects = connection.connects
                    let replies = try connection.pipeline(commands)
                    // A new connection (after a failure, or a server that hung up): it may be a new server.
                    if connection.connects != connects, connects > 0 { recovering = true }
                    for reply in replies {
                        if case .error(let text) = reply, !text.contains("equal or smaller") {
                            Log.info("redis: a reply append was refused: \(text)")
                        }
                    }
                    if recovering {
                        recovering = false
                        try reportLostRuns(Array(positions.keys), on: connection)
                    }
                    break
                } catch {
                    recovering = true
                    keys.shared.noteFailure(error)
                    connection.close()
                    Thread.sleep(forTimeInterval: 0.2)
                }
            }
        }
        connection.close()
    }

    /// The live runs whose keys Redis no longer has (it restarted while they ran): each is told to
    /// publish its state again, so a tab that opens now starts from a snapshot, not from the middle.
    private func reportLostRuns(_ messageIDs: [String], on connection: RedisConnection) throws(RedisError) {
        guard !messageIDs.isEmpty, let handler = onLost.withLock({ $0 }) else { return }
        let replies = try connection.pipeline(messageIDs.map { ["EXISTS", RedisArgument(keys.run($0))] })
        for (messageID, exists) in zip(messageIDs, replies) where exists.integer == 0 {
            Log.info("redis: reply \(messageID) lost its stream (Redis restarted?): its state is published again")
            handler(messageID)
        }
    }

    private func commands(for jobs: [Job], positions: inout [String: (logged: Int64, provisional: UInt64)])
        -> [[RedisArgument]] {
        var commands: [[RedisArgument]] = []
        var touched: [String] = []
        var seen = Set<String>()
        for job in jobs {
            if seen.insert(job.messageID).inserted { touched.append(job.messageID) }
            switch job {
            case .begin(let messageID, let baseID, let events):
                let run = RedisArgument(keys.run(messageID))
                commands.append(["HSET", run, "base", RedisArgument(baseID), "node", RedisArgument(nodeID)])
                commands.append(["PERSIST", run])
                commands.append(["PERSIST", RedisArgument(keys.stream(messageID))])
                // The run's lease: this node runs it (renewed by the `LeaseKeeper` while it does).
                commands.append(["SET", RedisArgument(keys.lease(messageID)), RedisArgument(nodeID),
                                 "PX", RedisArgument(max(1, lease.milliseconds))])
                positions[messageID] = (baseID, 0)
                append(events, of: messageID, to: &commands, positions: &positions)
            case .batch(let messageID, let events):
                append(events, of: messageID, to: &commands, positions: &positions)
            }
        }
        // After the entries they announce: a follower that reads the activity finds them there.
        let activity = RedisArgument(keys.activity)
        for messageID in touched {
            commands.append(["XADD", activity, "MAXLEN", "~", RedisArgument(ReplyKeys.activityLength), "*",
                             "m", RedisArgument(messageID)])
        }
        return commands
    }

    private func append(_ events: [GenerationEvent], of messageID: String, to commands: inout [[RedisArgument]],
                        positions: inout [String: (logged: Int64, provisional: UInt64)]) {
        let stream = RedisArgument(keys.stream(messageID))
        for event in events {
            var position = positions[messageID] ?? (event.id, 0)
            let id: String
            if event.isProvisional {
                position.provisional += 1
                id = "\(position.logged)-\(position.provisional)"
            } else {
                position = (event.id, 0)
                id = "\(event.id)-0"
            }
            positions[messageID] = position
            var command: [RedisArgument] = ["XADD", stream, RedisArgument(id)]
            for field in ReplyEventCodec.fields(event.payload) {
                command.append(RedisArgument(bytes: field.name))
                command.append(RedisArgument(bytes: field.value))
            }
            commands.append(command)
            if event.isDone {
                let milliseconds = RedisArgument(max(1, retain.milliseconds))
                commands.append(["PEXPIRE", stream, milliseconds])
                commands.append(["PEXPIRE", RedisArgument(keys.run(messageID)), milliseconds])
                commands.append(["DEL", RedisArgument(keys.lease(messageID))])
                positions[messageID] = nil
            }
        }
    }
}
