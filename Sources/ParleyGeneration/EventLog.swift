/// The replayable history of one generation, so a client that reconnects with a Last-Event-ID gets
/// exactly the events it missed, with no gap and no duplicate.
///
/// Invariant: the log covers the ids in `(baseID, lastID]`; a client whose last id lies in
/// `[baseID, lastID]` can be replayed exactly, any other needs a snapshot. Superseded tail events
/// are not kept: a `tail` replaces the previous tail and every `tail_append` to it, so only the
/// latest `tail` and the appends after it are kept, and memory stays proportional to the reply.
struct EventLog: Sendable {
    /// The id of the state the log starts from.
    let baseID: Int64
    private(set) var lastID: Int64
    private var events: [GenerationEvent] = []
    private var latestTail: GenerationEvent?
    /// The `tail_append` events after `latestTail` (or since the log began), in id order.
    private var tailAppends: [GenerationEvent] = []

    init(baseID: Int64) {
        self.baseID = baseID
        self.lastID = baseID
    }

    mutating func append(_ event: GenerationEvent) {
        precondition(event.id > lastID, "event ids must grow")
        lastID = event.id
        switch event.payload {
        case .tail:
            latestTail = event
            tailAppends.removeAll(keepingCapacity: true)
        case .tailAppend:
            tailAppends.append(event)
        default:
            events.append(event)
        }
    }

    /// The events after `id` in order, or nil when `id` is outside what the log can replay.
    func events(after id: Int64) -> [GenerationEvent]? {
        guard id >= baseID, id <= lastID else { return nil }
        let replay = events[Self.firstIndex(in: events, after: id)...]
        var tail: [GenerationEvent] = []
        // A client that has not seen the latest `tail` needs it; appends before it are superseded.
        if let latestTail, latestTail.id > id { tail.append(latestTail) }
        tail += tailAppends[Self.firstIndex(in: tailAppends, after: id)...]
        guard !tail.isEmpty else { return Array(replay) }
        // Both are in id order: merge them.
        var merged: [GenerationEvent] = []
        merged.reserveCapacity(replay.count + tail.count)
        var next = tail.startIndex
        for event in replay {
            while next < tail.endIndex, tail[next].id < event.id {
                merged.append(tail[next])
                next += 1
            }
            merged.append(event)
        }
        merged += tail[next...]
        return merged
    }

    /// Binary search for the first event of `list` with an id above `id`.
    private static func firstIndex(in list: [GenerationEvent], after id: Int64) -> Int {
        var low = 0
        var high = list.count
        while low < high {
            let mid = (low + high) / 2
            if list[mid].id <= id { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
