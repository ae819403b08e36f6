import Foundation
import Synchronization

/// Warm spares: up to `count` `parley-media-worker` children started ahead and waiting for their
/// request, so an upload does not wait for a process to start (the whole `parley` binary, its
/// libraries and libvips' start: about 100 ms of the 12-megapixel figure). Each spare still takes
/// ONE file and exits, and sets its rlimits itself once the request comes, before it opens the
/// input: isolation, limits and the kill on timeout are exactly those of a worker started on demand.
///
/// A spare is started off the critical path, on a thread of its own after a file was processed
/// (`refill`), never while the caller waits. One found dead when taken (killed, crashed) is reaped
/// and the next is tried; none left means the caller starts one itself. Spares wait on a blocking
/// read, so they cost memory, no CPU; a spare whose parent dies reads end of file and exits.
/// `shutdown` kills and reaps them all, and no new one starts after it.
final class SpareWorkers: Sendable {
    private struct State {
        var ready: [WorkerProcess] = []
        /// Spares being started on their threads.
        var starting = 0
        var closed = false
    }

    let count: Int
    private let executable: URL
    private let state = Mutex(State())

    init(count: Int, executable: URL) {
        self.count = max(0, count)
        self.executable = executable
    }

    /// A started worker, or nil when there is none (then the caller starts one).
    func take() -> WorkerProcess? {
        while true {
            guard let worker = state.withLock({ $0.ready.isEmpty ? nil : $0.ready.removeFirst() }) else { return nil }
            if !worker.hasEnded { return worker }
            worker.stop()
        }
    }

    /// Starts spares, each on a thread of its own, until `count` are ready or starting.
    func refill() {
        let missing = state.withLock { state -> Int in
            guard !state.closed else { return 0 }
            let missing = max(0, count - state.ready.count - state.starting)
            state.starting += missing
            return missing
        }
        for _ in 0..<missing {
            Thread.detachNewThread { [self] in
                let worker = try? WorkerProcess(executable: executable)
                let unwanted = state.withLock { state -> WorkerProcess? in
                    state.starting -= 1
                    guard let worker, !state.closed else { return worker }
                    state.ready.append(worker)
                    return nil
                }
                unwanted?.stop()
            }
        }
    }

    /// The pids of the spares ready now (tests kill one to see it replaced).
    var readyPIDs: [pid_t] { state.withLock { $0.ready.map(\.pid) } }

    /// Kills and reaps every spare, and waits for those still starting (a spawn takes milliseconds)
    /// to be killed too: once it returns, no spare process is left. Idempotent.
    func shutdown() {
        let spares = state.withLock { state -> [WorkerProcess] in
            state.closed = true
            defer { state.ready.removeAll() }
            return state.ready
        }
        for spare in spares { spare.stop() }
        while state.withLock({ $0.starting > 0 }) { usleep(2_000) }
    }
}
