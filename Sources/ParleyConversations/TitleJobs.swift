import Foundation

/// The conversation namings in progress (`ConversationTitler`). Why: a test that proves no title was
/// made waits for these to end instead of sleeping and hoping the work was done by then.
///
/// Concurrency: a lock-protected list; `add` is called synchronously when a reply's handler starts the
/// naming, so a `settled()` that follows the handler's answer always sees it.
package final class TitleJobs: @unchecked Sendable {
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var running: [Int: Task<Void, Never>] = [:]
    private var next = 0

    func add(_ job: Task<Void, Never>) {
        let token = lock.withLock {
            next += 1
            running[next] = job
            return next
        }
        Task {
            await job.value
            self.lock.withLock { _ = self.running.removeValue(forKey: token) }
        }
    }

    /// Returns once every job added before the call has ended.
    func settled() async {
        for job in lock.withLock({ Array(running.values) }) {
            await job.value
        }
    }
}
