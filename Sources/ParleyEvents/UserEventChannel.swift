import Synchronization

/// One user's notifications: the replay log and the streams (tabs) connected now.
///
/// Concurrency contract: thread-safe, one mutex. A notification is logged and handed to every stream
/// under it, so every stream sees the user's notifications in log order, and a stream attaching
/// gets its replay and then only later notifications (no gap between the two, no duplicate). Writing
/// to a stream only queues bytes, so the lock is held for microseconds per tab. Lock order: channel,
/// then stream (`UserEventStream`); a stream's close handler must not take this lock synchronously.
final class UserEventChannel: Sendable {
    private struct State: Sendable {
        var log: UserEventLog
        var members: [Int: UserEventStream] = [:]
        var nextToken = 0
    }

    private let state: Mutex<State>

    init(capacity: Int, now: Int64) {
        state = Mutex(State(log: UserEventLog(capacity: capacity, after: now)))
    }

    /// A channel that starts with what the relay kept of the user's notifications (several nodes).
    init(capacity: Int, history: UserEventHistory) {
        state = Mutex(State(log: UserEventLog(capacity: capacity, history: history)))
    }

    /// Logs `frame` under the id the relay gave it and writes it to every connected stream, unless the
    /// log already has it (a notification read both from the relay's history and as it came).
    func publish(_ frame: [UInt8], id: Int64) {
        state.withLock { state in
            guard let entry = state.log.append(frame, id: id) else { return }
            for stream in state.members.values {
                stream.notify(entry)
            }
        }
    }

    /// Logs `frame` and writes it to every connected stream.
    func publish(_ frame: [UInt8], now: Int64) {
        state.withLock { state in
            let entry = state.log.append(frame, now: now)
            for stream in state.members.values {
                stream.notify(entry)
            }
        }
    }

    /// Connects `stream`: it begins with the notifications after `lastID` (nil: none, a fresh start),
    /// or `resync` when the log cannot replay from there. Returns the token that detaches it.
    func attach(_ stream: UserEventStream, after lastID: Int64?) -> Int {
        state.withLock { state in
            let start: UserEventStream.Start
            if let lastID {
                start = state.log.entries(after: lastID).map { .replay($0) } ?? .resync
            } else {
                start = .fresh
            }
            stream.begin(start, lastID: state.log.lastID)
            let token = state.nextToken
            state.nextToken += 1
            state.members[token] = stream
            return token
        }
    }

    func detach(_ token: Int) {
        _ = state.withLock { $0.members.removeValue(forKey: token) }
    }

    /// Streams connected now.
    var streamCount: Int { state.withLock { $0.members.count } }
}
