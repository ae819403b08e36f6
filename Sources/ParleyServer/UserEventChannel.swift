import Synchronization

/// One user's notifications: the replay log and the streams (tabs) connected now.
///
/// Concurrency contract: thread-safe, one mutex. A notification is logged and handed to every stream
/// under it, so every stream sees the user's notifications in log order, and a stream attaching
/// gets its replay and then only later notifications (no gap between the two, no duplicate). Writing
/// to a stream only queues bytes, so the lock is held for microseconds per tab. Lock order: channel,
/// then stream (`UserEventStream`); a stream's close handler must not take this lock synchronously.
final class UserEventChannel: Sendable {
    /// A connected stream and the credential it was opened with (so a revoked one can be ended).
    private struct Member: Sendable {
        let stream: UserEventStream
        let credential: Caller.Credential
    }

    private struct State: Sendable {
        var log: UserEventLog
        var members: [Int: Member] = [:]
        var nextToken = 0
    }

    private let state: Mutex<State>

    init(capacity: Int, now: Int64) {
        state = Mutex(State(log: UserEventLog(capacity: capacity, after: now)))
    }

    /// Logs `frame` and writes it to every connected stream.
    func publish(_ frame: [UInt8], now: Int64) {
        state.withLock { state in
            let entry = state.log.append(frame, now: now)
            for member in state.members.values {
                member.stream.notify(entry)
            }
        }
    }

    /// Connects `stream`: it begins with the notifications after `lastID` (nil: none, a fresh start),
    /// or `resync` when the log cannot replay from there. Returns the token that detaches it.
    func attach(_ stream: UserEventStream, credential: Caller.Credential, after lastID: Int64?) -> Int {
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
            state.members[token] = Member(stream: stream, credential: credential)
            return token
        }
    }

    func detach(_ token: Int) {
        _ = state.withLock { $0.members.removeValue(forKey: token) }
    }

    /// Ends (after their queued bytes) the streams opened with a credential `ends` picks; returns how many.
    @discardableResult
    func finishStreams(where ends: (Caller.Credential) -> Bool) -> Int {
        let ending = state.withLock { state in
            state.members.values.filter { ends($0.credential) }.map(\.stream.writer)
        }
        for writer in ending { writer.finish() }
        return ending.count
    }

    /// Streams connected now.
    var streamCount: Int { state.withLock { $0.members.count } }
}
