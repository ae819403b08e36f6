import Synchronization

/// Writes that arrive together share one transaction: the group commit of writes whose callers wait
/// for their answer (a reply's start), as `saveProgress` is the one of every live reply's text.
///
/// Why: in a burst of starts (a class pressing Enter in the same second) every start was a transaction
/// of its own, and each commit wrote its pages to the WAL again. Here a write that finds no batch
/// running runs at once, with whatever is queued (alone, it waits for nothing); writes arriving
/// while a batch runs queue and go together in the next one. Each write runs in a savepoint of its
/// own, so one that fails (a deleted conversation) is undone alone while the others commit. Every
/// caller is answered only after the commit holding its rows, so an answer promises what a write of
/// its own did: the rows are in the WAL (see `Store`'s Durability).
///
/// Concurrency: callers suspend on a continuation, never blocking a thread while they wait for
/// others. The caller that starts a batch runs it on its own thread, as a write of its own would
/// have; if more arrived meanwhile, a new task runs the next batch, so nobody runs batches for ever.
final class SharedCommits: Sendable {
    /// What the batches so far held, for tests and logs.
    struct Counts: Sendable, Equatable {
        /// Transactions committed.
        var batches = 0
        /// Writes those transactions held.
        var writes = 0
        /// The most writes one transaction held.
        var largest = 0
    }

    fileprivate struct State {
        var queue: [any SharedWrite] = []
        /// Whether a batch is running or about to: a write queued meanwhile goes in the next one.
        var running = false
        var counts = Counts()
    }

    private let state = Mutex(State())
    /// Writes in one transaction at most (a bound on how long the writer is held at once).
    let maxBatch: Int

    init(maxBatch: Int = 256) {
        self.maxBatch = max(1, maxBatch)
    }

    /// What the committed batches held so far.
    var counts: Counts { state.withLock { $0.counts } }

    /// Writes waiting for the next batch (not the one running).
    var queued: Int { state.withLock { $0.queue.count } }

    /// Counts a committed batch of `writes` writes.
    func committed(_ writes: Int) {
        state.withLock { state in
            state.counts.batches += 1
            state.counts.writes += writes
            state.counts.largest = max(state.counts.largest, writes)
        }
    }

    /// Queues `write`; runs the batch that holds it now if none is running (see the type's comment).
    /// The batch is taken in the same lock that queued the write: what it holds is decided at once.
    func submit(_ write: any SharedWrite, to store: Store) {
        let batch = state.withLock { state -> [any SharedWrite]? in
            state.queue.append(write)
            guard !state.running else { return nil }
            state.running = true
            return state.take(maxBatch)
        }
        if let batch { run(batch, store) }
    }

    /// Runs one batch, then hands the next (if any) to a new task.
    private func run(_ batch: [any SharedWrite], _ store: Store) {
        store.writeShared(batch)
        let next = state.withLock { state -> [any SharedWrite]? in
            guard !state.queue.isEmpty else {
                state.running = false
                return nil
            }
            return state.take(maxBatch)
        }
        if let next {
            Task { self.run(next, store) }
        }
    }
}

extension SharedCommits.State {
    /// The next batch: up to `limit` writes from the front of the queue.
    fileprivate mutating func take(_ limit: Int) -> [any SharedWrite] {
        let batch = Array(queue.prefix(limit))
        queue.removeFirst(batch.count)
        return batch
    }
}

/// One write waiting in `SharedCommits`: run in the batch's transaction, then answered with the
/// outcome of that transaction.
protocol SharedWrite: Sendable {
    /// Runs the write in a savepoint of the batch's open transaction. Throws only when the transaction
    /// itself cannot go on (SQLite rolled it back); the write's own failure is kept for `answer`.
    func run(_ writer: Store.Writer, now: Int64) throws(StoreError)

    /// Answers the caller: its own failure, else `commitFailure`, else its result.
    func answer(commitFailure: StoreError?)
}

/// A `SharedWrite` whose caller awaits a `T`.
final class PendingWrite<T: Sendable>: SharedWrite {
    private let body: @Sendable (Store.Writer, Int64) throws(StoreError) -> T
    private let continuation: CheckedContinuation<Result<T, StoreError>, Never>
    /// Set by `run` (on the batch's thread) and read by `answer` (after it, on the same thread).
    private let outcome = Mutex<Result<T, StoreError>?>(nil)

    init(_ body: @escaping @Sendable (Store.Writer, Int64) throws(StoreError) -> T,
         continuation: CheckedContinuation<Result<T, StoreError>, Never>) {
        self.body = body
        self.continuation = continuation
    }

    func run(_ writer: Store.Writer, now: Int64) throws(StoreError) {
        let result = try writer.database.savepoint { () throws(StoreError) -> T in try body(writer, now) }
        outcome.withLock { $0 = result }
    }

    func answer(commitFailure: StoreError?) {
        let result = outcome.withLock { $0 }
        switch (result, commitFailure) {
        case (.failure(let own)?, _):
            continuation.resume(returning: .failure(own))
        case (_, let failure?):
            continuation.resume(returning: .failure(failure))
        case (let result?, nil):
            continuation.resume(returning: result)
        case (nil, nil):
            continuation.resume(returning: .failure(.corrupt("a shared write was never run")))
        }
    }
}
