/// The replayable history of one generation, so a client that reconnects with a Last-Event-ID gets
/// exactly the events it missed, with no gap and no duplicate.
///
/// Invariant: the log covers the ids in `(baseID, lastID]`; a client whose last id lies in
/// `[baseID, lastID]` can be replayed exactly, any other needs a snapshot. Superseded `tail` events
/// are not kept (a tail replaces the previous one), so memory stays proportional to the reply.
struct EventLog: Sendable {
    /// The id of the state the log starts from.
    let baseID: Int64
    private(set) var lastID: Int64
    private var events: [GenerationEvent] = []
    private var latestTail: GenerationEvent?

    init(baseID: Int64) {
        self.baseID = baseID
        self.lastID = baseID
    }

    mutating func append(_ event: GenerationEvent) {
        precondition(event.id > lastID, "event ids must grow")
        lastID = event.id
        if case .tail = event.payload {
            latestTail = event
        } else {
            events.append(event)
        }
    }

    /// The events after `id` in order, or nil when `id` is outside what the log can replay.
    func events(after id: Int64) -> [GenerationEvent]? {
        guard id >= baseID, id <= lastID else { return nil }
        var replay = Array(events[firstIndex(after: id)...])
        if let tail = latestTail, tail.id > id {
            let position = replay.firstIndex { $0.id > tail.id } ?? replay.endIndex
            replay.insert(tail, at: position)
        }
        return replay
    }

    /// Binary search for the first event with an id above `id`.
    private func firstIndex(after id: Int64) -> Int {
        var low = 0
        var high = events.count
        while low < high {
            let mid = (low + high) / 2
            if events[mid].id <= id { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
