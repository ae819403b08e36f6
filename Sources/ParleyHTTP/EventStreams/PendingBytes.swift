/// The unsent bytes of one event stream: a queue of chunks read front to back.
///
/// Chunks are kept as the arrays they were written as, never copied into one flat buffer: arrays
/// share their storage (copy-on-write), so a snapshot encoded once and written to 400 streams is
/// held once, not 400 times. Small writes are merged into a small last chunk so a stream of tiny
/// events does not become a long queue; merging never copies more than `mergeLimit` bytes.
///
/// A plain value with no locking: `EventStreamWriter` owns one under its mutex.
struct PendingBytes {
    /// Writes up to this size are merged into a last chunk that stays within it.
    static let mergeLimit = 16 * 1024

    private var chunks: [[UInt8]] = []
    /// Index of the first chunk not fully read; chunks before it are empty placeholders.
    private var head = 0
    /// Bytes of `chunks[head]` already read.
    private var offset = 0
    /// Unsent bytes.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Number of chunks waiting (for tests: shared writes must stay separate chunks).
    var chunkCount: Int { chunks.count - head }

    mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        count += bytes.count
        if bytes.count < Self.mergeLimit, let last = chunks.indices.last, last >= head,
            chunks[last].count + bytes.count <= Self.mergeLimit
        {
            chunks[last].append(contentsOf: bytes)
        } else {
            chunks.append(bytes)
        }
    }

    /// Copies up to `maximum` bytes to `destination` and drops them from the queue.
    /// Returns the bytes copied and the size of the chunks released (fully read) on the way.
    mutating func read(into destination: UnsafeMutableRawPointer, maximum: Int) -> (copied: Int, released: Int) {
        let copied = copy(into: destination, maximum: maximum)
        return (copied, drop(copied))
    }

    /// Copies up to `maximum` bytes from the front to `destination` without dropping them (a socket
    /// may take fewer); returns how many were copied.
    func copy(into destination: UnsafeMutableRawPointer, maximum: Int) -> Int {
        var copied = 0
        var index = head
        var start = offset
        while copied < maximum, index < chunks.count {
            let chunk = chunks[index]
            let count = min(chunk.count - start, maximum - copied)
            chunk.withUnsafeBytes { source in
                guard let base = source.baseAddress else { return }
                (destination + copied).copyMemory(from: base + start, byteCount: count)
            }
            copied += count
            index += 1
            start = 0
        }
        return copied
    }

    /// Drops `bytes` from the front (at most `count`). Returns the size of the chunks released.
    @discardableResult
    mutating func drop(_ bytes: Int) -> Int {
        var left = min(bytes, count)
        var released = 0
        count -= left
        while left > 0, head < chunks.count {
            let size = chunks[head].count - offset
            if left < size {
                offset += left
                break
            }
            left -= size
            released += chunks[head].count
            chunks[head] = []
            head += 1
            offset = 0
        }
        if head == chunks.count {
            chunks.removeAll(keepingCapacity: chunks.capacity <= 64)
            head = 0
        } else if head >= 64, head * 2 >= chunks.count {
            // Compact once the read placeholders are at least half of the queue: amortised O(1).
            chunks.removeFirst(head)
            head = 0
        }
        return released
    }

    /// Moves every unread byte of `other` to the end of this queue, chunks shared, not copied
    /// (except small ones merged as `append` does); `other` is left empty.
    mutating func moveAll(from other: inout PendingBytes) {
        for index in other.head..<other.chunks.count {
            let chunk = other.chunks[index]
            append(index == other.head && other.offset > 0 ? Array(chunk[other.offset...]) : chunk)
        }
        other = PendingBytes()
    }
}
