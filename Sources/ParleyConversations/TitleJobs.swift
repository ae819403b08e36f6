import Synchronization

/// The conversation namings in progress (`ConversationTitler`). Why: a test that proves no title was
/// made waits for these to end instead of sleeping and hoping the work was done by then.
///
/// Concurrency: a mutex-protected list; `add` is called synchronously when a reply's handler starts the
/// naming, so a `settled()` that follows the handler's answer always sees it.
package final class TitleJobs: Sendable {
    private struct Running {
        var jobs: [Int: Task<Void, Never>] = [:]
        var next = 0
    }

    private let running = Mutex(Running())

    package init() {}

    func add(_ job: Task<Void, Never>) {
        let token = running.withLock { running in
            running.next += 1
            running.jobs[running.next] = job
            return running.next
        }
        Task {
            await job.value
            self.running.withLock { _ = $0.jobs.removeValue(forKey: token) }
        }
    }

    /// Returns once every job added before the call has ended.
    package func settled() async {
        for job in running.withLock({ Array($0.jobs.values) }) {
            await job.value
        }
    }
}
