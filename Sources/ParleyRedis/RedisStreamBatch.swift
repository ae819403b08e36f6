/// What `XREAD` returned for one stream: its key and the entries after the id asked for.
public struct RedisStreamBatch: Sendable, Equatable {
    public var key: String
    public var entries: [RedisStreamEntry]

    public init(key: String, entries: [RedisStreamEntry]) {
        self.key = key
        self.entries = entries
    }
}
