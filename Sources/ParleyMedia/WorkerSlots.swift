import Synchronization

/// The bounded pool's admission: at most `workers` files run, at most `queue` wait (first come,
/// first served), the rest are refused at once with `.busy` so a flood of uploads cannot pile up.
/// Thread-safe; waiting suspends the task (a continuation), never a thread.
final class WorkerSlots: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Bool, Never>] = []
    }

    private let workers: Int
    private let queue: Int
    private let state = Mutex(State())

    init(workers: Int, queue: Int) {
        self.workers = max(1, workers)
        self.queue = max(0, queue)
    }

    /// Returns once a slot is this caller's; throws `.busy` when all run and the queue is full.
    /// Each successful call must be paired with one `release()`.
    func acquire() async throws(MediaError) {
        let admitted = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let decision: Bool? = state.withLock { state in
                if state.running < workers {
                    state.running += 1
                    return true
                }
                if state.waiting.count < queue {
                    state.waiting.append(continuation)
                    return nil
                }
                return false
            }
            if let decision { continuation.resume(returning: decision) }
        }
        if !admitted { throw .busy }
    }

    /// Hands the slot to the longest waiter, or frees it.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume(returning: true)
    }
}
