/// A stored file's bytes (or one range of them), pulled one chunk at a time: a streaming answer or a
/// Range request holds one chunk in memory, never the whole file.
///
/// Each `next()` is its own short read (the SQLite store opens a reader connection, reads the chunk
/// and lets the connection go), so a slow client never holds a connection between chunks. Stored
/// bytes never change, so chunks read at different times fit together; if the file is removed
/// meanwhile, `next()` throws `StoreError.notFound`.
public struct FileContentReader: Sendable {
    /// Reads `count` bytes at `offset` of the stored content (fewer only at its end).
    public typealias ReadChunk = @Sendable (_ offset: Int64, _ count: Int) throws(StoreError) -> [UInt8]

    /// The chunk a reader returns and a save writes when nobody says otherwise: big enough that a
    /// 20 MB file is 80 steps, small enough that twenty streams at once hold a few megabytes.
    public static let defaultChunkSize = 256 * 1024

    /// The bytes this reader yields, as offsets into the stored content.
    public let range: Range<Int64>
    /// The most bytes one `next()` returns.
    public let chunkSize: Int
    private var offset: Int64
    private let readChunk: ReadChunk

    /// A reader of `range` through `read`; `chunkSize` is at least 1. Backends build it; callers pull it.
    public init(range: Range<Int64>, chunkSize: Int, read: @escaping ReadChunk) {
        self.range = range
        self.chunkSize = max(chunkSize, 1)
        self.offset = range.lowerBound
        self.readChunk = read
    }

    /// Bytes not yet returned.
    public var remaining: Int64 { range.upperBound - offset }

    /// The next chunk (at most `chunkSize` bytes), or nil once the range is done.
    public mutating func next() throws(StoreError) -> [UInt8]? {
        guard offset < range.upperBound else { return nil }
        let count = Int(min(Int64(chunkSize), range.upperBound - offset))
        let chunk = try readChunk(offset, count)
        guard chunk.count == count else {
            throw StoreError.corrupt("stored file content ended at \(offset + Int64(chunk.count)), before \(range.upperBound)")
        }
        offset += Int64(count)
        return chunk
    }
}
