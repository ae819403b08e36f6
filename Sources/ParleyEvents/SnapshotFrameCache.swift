import Foundation
import ParleyGeneration
import Synchronization

/// Snapshot frames encoded once and shared by the subscribers that get the same snapshot.
///
/// A snapshot is the whole reply (text, HTML blocks, reasoning): for a 1 MB reply about 2 MB of SSE.
/// Encoded per subscriber, 400 clients that never read held 400 copies (RSS 78 MiB → 885 MiB).
/// Encoded once, the frame's array is written to every stream and `EventStreamWriter` keeps the array
/// itself, so the bytes are held once.
///
/// A frame is the bytes from `event: snapshot` to the blank line, without the `id:` line: a snapshot
/// built from the store carries a fresh id for each request while its bytes are the same. Frames are
/// matched by message, mode and the snapshot's exact bytes (never by a hash: a collision would show
/// a client someone else's text). Comparing costs a memory compare, far less than encoding, and
/// nothing when the snapshot's strings share storage (a live or retained generation's).
///
/// At most `capacity` frames and `byteLimit` bytes of frames are kept, most recently used first, so
/// what the cache holds once clients have left stays small. Each entry also keeps the snapshot it was
/// encoded from (to compare with), which is smaller than its frame: at most about twice `byteLimit` in all.
///
/// Concurrency contract: thread-safe. Encoding runs outside the lock (a long reply must not hold up
/// other streams); two subscribers missing at once both encode, and the second keeps the first's
/// frame, so the bytes held afterwards are still shared.
package final class SnapshotFrameCache: Sendable {
    /// Frames kept.
    static let defaultCapacity = 8
    /// Bytes of frames kept; a larger frame is encoded per subscriber, as before.
    static let defaultByteLimit = 16 << 20

    private struct Entry {
        let snapshot: GenerationSnapshot
        let mode: EventStreamEncoder.Mode
        let frame: [UInt8]
    }

    let capacity: Int
    let byteLimit: Int
    /// Most recently used last.
    private let entries = Mutex<[Entry]>([])

    package init(capacity: Int = SnapshotFrameCache.defaultCapacity, byteLimit: Int = SnapshotFrameCache.defaultByteLimit) {
        self.capacity = capacity
        self.byteLimit = byteLimit
    }

    /// The frame of `snapshot` in `mode`: a cached one with the same bytes, or `encode()`'s result,
    /// which is then cached.
    func frame(for snapshot: GenerationSnapshot, mode: EventStreamEncoder.Mode,
               encode: () -> [UInt8]) -> [UInt8] {
        if let cached = lookUp(snapshot, mode: mode) { return cached }
        let frame = encode()
        return entries.withLock { entries in
            if let index = Self.index(of: snapshot, mode: mode, in: entries) {
                return Self.touch(index, in: &entries)
            }
            guard frame.count <= byteLimit else { return frame }
            entries.append(Entry(snapshot: snapshot, mode: mode, frame: frame))
            var bytes = entries.reduce(0) { $0 + $1.frame.count }
            while entries.count > capacity || bytes > byteLimit {
                bytes -= entries.removeFirst().frame.count
            }
            return frame
        }
    }

    /// Frames held (for tests).
    var count: Int { entries.withLock { $0.count } }

    private func lookUp(_ snapshot: GenerationSnapshot, mode: EventStreamEncoder.Mode) -> [UInt8]? {
        entries.withLock { entries in
            guard let index = Self.index(of: snapshot, mode: mode, in: entries) else { return nil }
            return Self.touch(index, in: &entries)
        }
    }

    private static func touch(_ index: Int, in entries: inout [Entry]) -> [UInt8] {
        let entry = entries.remove(at: index)
        entries.append(entry)
        return entry.frame
    }

    private static func index(of snapshot: GenerationSnapshot, mode: EventStreamEncoder.Mode,
                              in entries: [Entry]) -> Int? {
        entries.lastIndex { $0.mode == mode && same($0.snapshot, snapshot) }
    }

    /// Equal byte for byte (not Unicode-equivalent: "é" composed and decomposed are different frames).
    private static func same(_ a: GenerationSnapshot, _ b: GenerationSnapshot) -> Bool {
        a.messageID == b.messageID && a.status == b.status && a.blocks.count == b.blocks.count
            && sameBytes(a.content, b.content) && sameBytes(a.tail, b.tail) && sameBytes(a.reasoning, b.reasoning)
            && (a.tailHTML == nil) == (b.tailHTML == nil) && sameBytes(a.tailHTML ?? "", b.tailHTML ?? "")
            && zip(a.blocks, b.blocks).allSatisfy { sameBytes($0, $1) }
    }

    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let compared = a.utf8.withContiguousStorageIfAvailable { left in
            b.utf8.withContiguousStorageIfAvailable { right in
                guard let leftBase = left.baseAddress, let rightBase = right.baseAddress else { return true }
                return leftBase == rightBase || memcmp(leftBase, rightBase, left.count) == 0
            }
        }
        if let compared, let result = compared { return result }
        return a.utf8.elementsEqual(b.utf8)
    }
}
