import Dispatch
import ParleyAuth
import Synchronization

/// Argon2id off the Swift concurrency pool: each hash takes tens of milliseconds and
/// `memoryKiB` of memory by design, so at most `parallel` run at once on threads of their own and
/// a burst of sign-ins waits here instead of stalling every other request.
final class PasswordWork: Sendable {
    let hasher: PasswordHasher
    private let queue = DispatchQueue(label: "parley.passwords", attributes: .concurrent)
    private let slots: DispatchSemaphore
    /// Verified when there is no real hash to check (unknown or disabled user), so those answers
    /// take as long as a wrong password. Made at the first sign-in (local mode never needs it).
    private let decoy = Mutex<String?>(nil)

    init(memoryKiB: Int, parallel: Int = 2) {
        hasher = PasswordHasher(operations: PasswordHasher.interactive.operations, memoryBytes: memoryKiB * 1024)
        slots = DispatchSemaphore(value: parallel)
    }

    func hash(_ password: String) async throws -> String {
        try await run { [hasher] in try hasher.hash(password) }
    }

    /// Whether `password` matches `hash`; with no hash, checks a decoy and answers false.
    func verify(_ password: String, against hash: String?) async -> Bool {
        let hasher = hasher
        guard let stored = try? hash ?? decoyHash() else { return false }
        return (try? await run { hasher.verify(password, against: stored) && hash != nil }) ?? false
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
        let slots = slots
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                slots.wait()
                defer { slots.signal() }
                continuation.resume(with: Result { try work() })
            }
        }
    }
}
