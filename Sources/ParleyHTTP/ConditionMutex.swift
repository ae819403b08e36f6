#if canImport(Glibc)
import Glibc
#endif

/// A value behind a mutex, with a condition variable to wait until the value satisfies a predicate.
///
/// Why: `Synchronization.Mutex` cannot wait. Shutdown waits for handlers, responses and streams to end;
/// it polled every 5 ms (`usleep`) and now sleeps until a change that may end the wait.
///
/// Concurrency contract: thread-safe. Every `withLock` wakes the waiters, which check their predicate
/// again. `wait` blocks its thread: never call it from Swift's cooperative pool (`HTTPServer.stop()`
/// runs shutdown on a thread of its own). Deadlines are on the monotonic clock.
final class ConditionMutex<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Only read or written with `mutex` held.
    private var value: Value

    init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try body(&value)
    }

    /// Blocks until `done` holds for the value or `timeout` seconds have passed (nil: no limit).
    /// Returns whether `done` held.
    func wait(timeout: Double?, until done: (Value) -> Bool) -> Bool {
        var deadline = timespec()
        if let timeout = timeout.map({ min(max(0, $0), 1e9) }) {  // 1e9 s: thirty years, no overflow
            clock_gettime(CLOCK_MONOTONIC, &deadline)
            let nanos = Int(deadline.tv_nsec) + Int((timeout - timeout.rounded(.down)) * 1e9)
            deadline.tv_sec += Int(timeout.rounded(.down)) + nanos / 1_000_000_000
            deadline.tv_nsec = nanos % 1_000_000_000
        }
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !done(value) {
            guard timeout != nil else {
                pthread_cond_wait(condition, mutex)
                continue
            }
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { return done(value) }
        }
        return true
    }
}
