import ParleyGeneration
import Synchronization

/// The SSE bytes of a reply's latest batches, encoded once and shared by every subscriber in the same
/// mode, as `SnapshotFrameCache` does for snapshots.
///
/// Why: a reply hands one batch (one array) to each of its subscribers in turn, and each encoded it
/// again: 100 tabs on one reply encoded every frame 100 times.
///
/// A batch is matched by the identity of its array's storage, never by a hash or an id: the cache holds
/// the batches it keeps, so their storage cannot be freed and reused by another array while an entry
/// names it, and an array's storage, once shared, is never changed in place. Only streams that write
/// the events' own ids share (a user event stream's ids carry its own position).
///
/// Concurrency contract: thread-safe; encoding runs outside the lock. At most `capacity` batches are kept,
/// the most recent last, so replies delivering at the same time on other threads rarely push out a batch
/// whose subscribers are still being served.
package final class BatchFrameCache: Sendable {
    /// Batches kept.
    static let defaultCapacity = 16

    private struct Entry {
        let batch: [GenerationEvent]
        let mode: EventStreamEncoder.Mode
        let pieces: [[UInt8]]
    }

    let capacity: Int
    private let entries = Mutex<[Entry]>([])

    package init(capacity: Int = BatchFrameCache.defaultCapacity) {
        self.capacity = capacity
    }

    /// The pieces of `batch` in `mode`: the ones encoded for the same array, or `encode()`'s, then kept.
    func pieces(for batch: [GenerationEvent], mode: EventStreamEncoder.Mode,
                encode: () -> [[UInt8]]) -> [[UInt8]] {
        // A snapshot's frame is shared already (`SnapshotFrameCache`), and kept here it could hold megabytes.
        guard let storage = Self.storage(of: batch), !batch.contains(where: Self.isSnapshot) else { return encode() }
        if let cached = entries.withLock({ entries in
            entries.last { $0.mode == mode && Self.storage(of: $0.batch) == storage }?.pieces
        }) {
            return cached
        }
        let pieces = encode()
        entries.withLock { entries in
            entries.append(Entry(batch: batch, mode: mode, pieces: pieces))
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        }
        return pieces
    }

    /// Batches held (for tests).
    var count: Int { entries.withLock { $0.count } }

    private static func isSnapshot(_ event: GenerationEvent) -> Bool {
        if case .snapshot = event.payload { true } else { false }
    }

    /// Where the array's elements live; nil for an empty array (all of them share one storage).
    private static func storage(of batch: [GenerationEvent]) -> UnsafeRawPointer? {
        guard !batch.isEmpty else { return nil }
        return batch.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }
}
