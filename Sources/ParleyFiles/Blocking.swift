import Dispatch

/// Runs work that blocks for a while (hashing 20 MB, writing a blob of that size) on a Dispatch
/// thread instead of Swift's cooperative pool: that pool has one thread per core (two here), and a
/// chat's replies must not wait behind an upload.
package enum Blocking {
    package static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try work() })
            }
        }
    }
}
