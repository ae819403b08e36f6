import ParleyPrimitives

/// The store's limits, each checked by `Store.init` (out of range -> `StoreError.invalidConfiguration`).
public struct StoreConfiguration: Sendable, Equatable {
    /// Reader connections in the pool: this many reads run at once, beside the one writer.
    public var readers: Int
    /// How long a connection waits for a lock before SQLite reports `SQLITE_BUSY`. With one writer
    /// connection in this process, only other processes (or a checkpoint) can hold a lock.
    public var busyTimeout: Duration
    /// The most conversations `Store.listConversations` returns per page (bigger requests are cut).
    public var maxPageSize: Int
    /// When the WAL is checkpointed (`Checkpointer`); tests make these small.
    var checkpoints = Checkpointer.Limits()

    public static let readerRange = 1...64
    public static let busyTimeoutRange: ClosedRange<Duration> = .zero ... .seconds(600)
    public static let maxPageSizeRange = 1...1000

    public init(readers: Int = 4, busyTimeout: Duration = .milliseconds(5000), maxPageSize: Int = 100) {
        self.readers = readers
        self.busyTimeout = busyTimeout
        self.maxPageSize = maxPageSize
    }

    func validate() throws(StoreError) {
        guard Self.readerRange.contains(readers) else {
            throw StoreError.invalidConfiguration("readers must be in \(Self.readerRange), got \(readers)")
        }
        guard Self.busyTimeoutRange.contains(busyTimeout) else {
            throw StoreError.invalidConfiguration("busyTimeout must be 0...600 s, got \(busyTimeout)")
        }
        guard Self.maxPageSizeRange.contains(maxPageSize) else {
            throw StoreError.invalidConfiguration(
                "maxPageSize must be in \(Self.maxPageSizeRange), got \(maxPageSize)")
        }
    }

    var busyTimeoutMilliseconds: Int32 {
        Int32(clamping: busyTimeout.milliseconds)
    }
}
