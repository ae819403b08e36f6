import Dispatch
import Foundation
import ParleyAPI
import ParleyAuth
import ParleyHTTP
import ParleyStore
import Synchronization

/// Argon2id off the Swift concurrency pool: each hash takes tens of milliseconds and
/// `memoryKiB` of memory by design, so at most `parallel` run at once on threads of their own
/// (`PasswordThreads`) and a burst of sign-ins waits here instead of stalling every other request.
/// At most `waiting` more may queue, as jobs, holding no thread; past that the request is answered
/// 503 at once (a flood cannot grow the queue).
///
/// It also times every check by its cost (`SignInPadding`), so a failed sign-in can wait until it has
/// taken as long as a check at the slowest cost still stored. Thread-safe: the decoy and the timings
/// are each behind a mutex.
package final class PasswordWork: Sendable {
    package let hasher: PasswordHasher
    private let threads: PasswordThreads
    private let capacity: Int
    private let inFlight = Atomic<Int>(0)
    /// Verified when there is no real hash to check (unknown or disabled user), so those answers
    /// take as long as a wrong password. Made at the first sign-in (local mode never needs it).
    private let decoy = Mutex<String?>(nil)
    private let padding = Mutex(SignInPadding())
    /// Checks timed per stored cost at start, before any sign-in (`SignInPadding` keeps more).
    static let startSamples = 3

    package init(memoryKiB: Int, parallel: Int = 2, waiting: Int = 32) {
        hasher = PasswordHasher(operations: PasswordHasher.interactive.operations, memoryBytes: memoryKiB * 1024)
        threads = PasswordThreads(count: parallel)
        capacity = parallel + waiting
    }

    deinit {
        threads.stop()
    }

    /// Team mode, at start: makes the decoy and times `startSamples` checks at each cost among the
    /// accounts' hashes and today's, so even the first failed sign-in costs a normal check and waits
    /// as long as the slowest. A few checks per cost: at the default cost, about half a second.
    package func prepare(accounts: [User]) throws {
        let decoy = try decoyHash()
        let today = PasswordCost(hasher)
        let costs = storedCosts(accounts)
        padding.withLock { $0.setStored(costs) }
        for cost in costs {
            let sample = cost == today ? decoy : try cost.hasher.hash(SecretToken.generate())
            for _ in 0..<Self.startSamples {
                let (_, took) = Self.timed { [hasher] in hasher.verify(SecretToken.generate(), against: sample) }
                padding.withLock { $0.record(took, for: cost) }
            }
        }
        if costs.count > 1 {
            // A cost change under way: the old accounts' cost now sets every failure's time.
            let milliseconds = Int((padding.withLock { $0.target } / .milliseconds(1)).rounded())
            let listed = costs.sorted { $0.memoryKiB < $1.memoryKiB }.map(\.description).joined(separator: ", ")
            Log.info("team mode: passwords are stored at \(costs.count) Argon2id costs (\(listed)); a failed sign-in "
                     + "takes \(milliseconds) ms, the slowest, until their users sign in again and are brought to today's")
        }
    }

    /// The accounts' hashes changed (a password set or brought to today's cost, an account disabled
    /// or enabled): the costs still in use are the ones failures are padded to. Rare, so the caller
    /// reads every account again. Sign-in's rehash and the admin's changes call it; a member's own
    /// password change does not, so a cost it retires pads failures until the next call or start
    /// (a longer wait, never a tell).
    func accountsChanged(_ accounts: [User]) {
        let costs = storedCosts(accounts)
        padding.withLock { $0.setStored(costs) }
    }

    /// The costs a sign-in may check: enabled accounts' hashes (a disabled one is checked against the
    /// decoy) and today's (the decoy's).
    private func storedCosts(_ accounts: [User]) -> Set<PasswordCost> {
        Set(accounts.filter { !$0.disabled }.compactMap { $0.passwordHash.flatMap(PasswordCost.init(hash:)) })
            .union([PasswordCost(hasher)])
    }

    func hash(_ password: String) async throws -> String {
        try await run { [hasher] in try hasher.hash(password) }
    }

    /// Whether `password` matches `hash`; with no hash, checks a decoy and answers false. Throws 503
    /// `busy` when too many checks are already waiting. The check's own time (not its wait in the
    /// queue) is recorded for its cost.
    func verify(_ password: String, against hash: String?) async throws -> Bool {
        let hasher = hasher
        let stored = try hash ?? decoyHash()
        let (matched, took) = try await run { Self.timed { hasher.verify(password, against: stored) } }
        if let cost = PasswordCost(hash: stored) {
            padding.withLock { $0.record(took, for: cost) }
        }
        return matched && hash != nil
    }

    /// Waits (without work) until `started` plus the time of a check at the slowest cost still
    /// stored, so a failed sign-in takes as long whether the name is an account, a disabled one or
    /// none, and whatever cost its hash was made with. At once if that time has passed already.
    func padFailure(startedAt started: ContinuousClock.Instant) async {
        let target = padding.withLock { $0.target }
        try? await Task.sleep(until: started + target, clock: .continuous)
    }

    private static func timed<T>(_ work: () throws -> T) rethrows -> (T, Duration) {
        let clock = ContinuousClock()
        let started = clock.now
        let result = try work()
        return (result, clock.now - started)
    }

    private func decoyHash() throws -> String {
        if let made = decoy.withLock({ $0 }) { return made }
        let made = try hasher.hash(SecretToken.generate())
        return decoy.withLock { current in
            if current == nil { current = made }
            return current ?? made
        }
    }

    private func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        guard inFlight.add(1, ordering: .relaxed).newValue <= capacity else {
            inFlight.subtract(1, ordering: .relaxed)
            throw HTTPError(status: 503, code: "busy", message: "Too many sign-ins at once; try again shortly.",
                            headers: [HTTPError.Header("Retry-After", "1")])
        }
        return try await withCheckedThrowingContinuation { continuation in
            threads.submit { [self] in
                let result = Result { try work() }
                inFlight.subtract(1, ordering: .relaxed)
                continuation.resume(with: result)
            }
        }
    }
}

/// A fixed set of threads of their own for password work, taking jobs first come, first served from
/// one queue: `count` jobs run at once, the rest wait as closures, holding no thread. A thread with
/// nothing to do sleeps on `available` (a count of queued jobs); no GCD or Swift concurrency thread
/// ever waits here, so a burst of sign-ins parks nothing but these threads.
///
/// Thread-safe: the queue is behind a mutex. `stop()` lets each thread finish its job and end.
private final class PasswordThreads: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var stopped = false
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let count: Int

    init(count: Int) {
        precondition(count > 0, "password work needs at least one thread")
        self.count = count
        for index in 1...count {
            let thread = Thread { [self] in work() }
            thread.name = "parley.passwords.\(index)"
            thread.start()
        }
    }

    /// Queues `job`; a free thread runs it at once, or the first one to finish its current job.
    func submit(_ job: @escaping @Sendable () -> Void) {
        state.withLock { $0.jobs.append(job) }
        available.signal()
    }

    /// Ends the threads once the queue is empty (the owner is gone, so nothing more is submitted).
    func stop() {
        state.withLock { $0.stopped = true }
        for _ in 0..<count { available.signal() }
    }

    private func work() {
        while true {
            available.wait()
            let job: (@Sendable () -> Void)? = state.withLock { state in
                state.jobs.isEmpty ? nil : state.jobs.removeFirst()
            }
            if let job {
                job()
            } else if state.withLock({ $0.stopped }) {
                return
            }
        }
    }
}
