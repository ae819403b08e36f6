/// Finished replies kept in memory for `retainFinished`, so a client that reconnects just after the end
/// gets an exact replay, and a continue's ids go on above the previous run's.
///
/// A value type fed with instants (tested without sleeping); `Generations` arms one `FrameTicker`
/// entry per retained reply and calls `expire(at:)` when it fires, instead of a sleeping task each.
struct RetainedReplies: Sendable {
    struct Entry: Sendable {
        let generation: Generation
        let lastEventID: Int64
        let expires: ContinuousClock.Instant
    }

    /// How long a finished reply is kept.
    let keep: Duration
    private var entries: [String: Entry] = [:]

    init(keep: Duration) {
        self.keep = keep
    }

    var count: Int { entries.count }

    /// Keeps `generation` (just finished at `now`) until `now + keep`; a newer run of the same message replaces it.
    mutating func retain(_ generation: Generation, lastEventID: Int64, at now: ContinuousClock.Instant) {
        entries[generation.messageID] = Entry(generation: generation, lastEventID: lastEventID, expires: now + keep)
    }

    func generation(for messageID: String) -> Generation? {
        entries[messageID]?.generation
    }

    /// The last event id of the message's finished run, while it is kept.
    func lastEventID(for messageID: String) -> Int64? {
        entries[messageID]?.lastEventID
    }

    /// Forgets the message's finished run (it is being continued).
    mutating func remove(_ messageID: String) {
        entries[messageID] = nil
    }

    /// Drops every reply whose time is up at `now`; a ticker may wake up to `FrameTicker.slack` early,
    /// so `tolerance` earlier counts as due. Returns how many were dropped.
    @discardableResult
    mutating func expire(at now: ContinuousClock.Instant, tolerance: Duration = .milliseconds(1)) -> Int {
        let before = entries.count
        entries = entries.filter { $0.value.expires > now + tolerance }
        return before - entries.count
    }
}
