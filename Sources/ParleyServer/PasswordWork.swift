import Dispatch
import ParleyAuth
import ParleyHTTP
import Synchronization

/// Argon2id off the Swift concurrency pool: each hash takes tens of milliseconds and
/// `memoryKiB` of memory by design, so at most `parallel` run at once on threads of their own and
/// a burst of sign-ins waits here instead of stalling every other request. At most `waiting` more
/// may queue; past that the request is answered 503 at once (a flood cannot grow the queue).
final class PasswordWork: Sendable {
    let hasher: PasswordHasher
    private let queue = DispatchQueue(label: "parley.passwords", attributes: .concurrent)
    private let slots: DispatchSemaphore
    private let capacity: Int
    private let inFlight = Atomic<Int>(0)
    /// Verified when there is no real hash to check (unknown or disabled user), so those answers
    /// take as long as a wrong password. Made at the first sign-in (local mode never needs it).
    private let decoy = Mutex<String?>(nil)

    init(memoryKiB: Int, parallel: Int = 2, waiting: Int = 32) {
        hasher = PasswordHasher(operations: PasswordHasher.interactive.operations, memoryBytes: memoryKiB * 1024)
        slots = DispatchSemaphore(value: parallel)
        capacity = parallel + waiting
    }

    /// Makes the decoy now (team mode, at start), so even the first unknown name costs a normal check.
    func prepareDecoy() throws {
        _ = try decoyHash()
    }

    func hash(_ password: String) async throws -> String {
        try await run { [hasher] in try hasher.hash(password) }
    }

    /// Whether `password` matches `hash`; with no hash, checks a decoy and answers false. Throws 503
    /// `busy` when too many checks are already waiting.
    func verify(_ password: String, against hash: String?) async throws -> Bool {
        let hasher = hasher
        let stored = try hash ?? decoyHash()
        return try await run { hasher.verify(password, against: stored) && hash != nil }
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
            queue.async { [self] in
                slots.wait()
                defer {
                    slots.signal()
                    inFlight.subtract(1, ordering: .relaxed)
                }
                continuation.resume(with: Result { try work() })
            }
        }
    }
}
