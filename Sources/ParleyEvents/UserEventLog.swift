import ParleyGeneration

/// The notifications one user's streams can still replay: the last `capacity` of them, so a tab that
/// reconnects with a Last-Event-ID gets exactly what it missed, and a tab that was away for longer is
/// told to reload its lists (`resync`) instead.
///
/// Ids only grow: each is the larger of the previous id + 1 and the clock in microseconds (`EventIDClock`), so
/// a restarted server never reissues an id a browser still holds (the log of a new run starts above it,
/// and that browser gets a resync). Invariant: every notification with an id in `(floorID, lastID]` is
/// held; a stream whose last id lies in `[floorID, lastID]` can be replayed exactly, any other cannot.
struct UserEventLog: Sendable {
    /// One notification: its id and its SSE frame without the `id:` line (shared by every stream).
    struct Entry: Sendable {
        let id: Int64
        let frame: [UInt8]
    }

    let capacity: Int
    /// Notifications with ids above this are all held.
    private(set) var floorID: Int64
    var lastID: Int64 { ids.last }
    private var ids: EventIDClock
    /// A ring: once full, `start` is the oldest entry.
    private var entries: [Entry] = []
    private var start = 0

    /// An empty log whose ids start above `id` (the clock when the log is made).
    init(capacity: Int, after id: Int64) {
        precondition(capacity > 0, "a log holds at least one notification")
        self.capacity = capacity
        floorID = id
        ids = EventIDClock(after: id)
    }

    /// A log holding what a relay kept of a user's notifications (several nodes): its last `capacity`.
    init(capacity: Int, history: UserEventHistory) {
        self.init(capacity: capacity, after: history.floorID)
        for entry in history.entries.suffix(capacity) {
            append(entry.frame, id: entry.id)
        }
        if history.entries.count > capacity, let first = entries.first {
            floorID = max(floorID, first.id)
        }
    }

    /// Appends a notification; `now` is the clock in microseconds. The oldest falls out when full.
    @discardableResult
    mutating func append(_ frame: [UInt8], now: Int64) -> Entry {
        store(Entry(id: ids.next(now: now), frame: frame))
    }

    /// Appends a notification whose id the relay gave (several nodes); nil, and nothing appended,
    /// when the log already holds that id or a later one (it came back twice).
    @discardableResult
    mutating func append(_ frame: [UInt8], id: Int64) -> Entry? {
        guard id > lastID else { return nil }
        _ = ids.next(now: id)
        return store(Entry(id: id, frame: frame))
    }

    private mutating func store(_ entry: Entry) -> Entry {
        if entries.count < capacity {
            entries.append(entry)
        } else {
            floorID = entries[start].id
            entries[start] = entry
            start = (start + 1) % capacity
        }
        return entry
    }

    /// The notifications after `id` in order, or nil when `id` is outside what the log can replay
    /// (older than what it still holds, or never issued by it).
    func entries(after id: Int64) -> [Entry]? {
        guard id >= floorID, id <= lastID else { return nil }
        let ordered = entries[start...] + entries[..<start]
        return ordered.filter { $0.id > id }
    }

    var count: Int { entries.count }
}
