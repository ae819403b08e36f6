import Synchronization

/// The count of uploads held at once (`HTTPServerConfiguration.maxConcurrentUploads`): a slot is taken
/// at headers time and given back when the upload's temp file is deleted, so the bound covers open
/// descriptors and disk alike (at most the limit × the largest file). Thread-safe, lock-free.
final class UploadSlots: Sendable {
    let limit: Int
    private let taken = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Takes a slot; false when all are taken.
    func acquire() -> Bool {
        var current = taken.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = taken.compareExchange(
                expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
        return false
    }

    func release() {
        taken.subtract(1, ordering: .acquiringAndReleasing)
    }

    /// Slots taken now.
    var inUse: Int { taken.load(ordering: .relaxed) }
}
