import ParleyHTTP
import Synchronization

/// Every open stream and export, with the user and the credential it was opened with: the one place
/// that bounds them per user (`StreamLimits`) and ends them when their credential ends (sign-out,
/// session or token revoked, password changed, account reset or disabled).
///
/// A handler admits its stream (`admit`, which throws the 429) before it answers 200, and keeps the
/// returned `StreamTicket` in the response body's closure. The slot is released exactly once: when
/// the stream's writer closes, or, when the HTTP layer never starts the body (the response could not
/// be queued, or a pulled body is freed), when the ticket is deinitialised.
///
/// Concurrency contract: thread-safe, one mutex, a leaf lock: nothing is called under it (writers are
/// finished after it is released), so it may be taken from a writer's close handler, under any other
/// lock (a user event channel's, a writer's).
package final class OpenStreams: Sendable {
    /// What a slot is counted against.
    package enum Kind: Sendable {
        /// An event stream: `GET /api/events`, a message's stream, a streamed `/v1` call.
        case stream
        /// `GET /api/export`.
        case export
    }

    private struct Slot {
        let userID: String
        let credential: Caller.Credential
        let kind: Kind
        /// The stream's writer once its body has started (an export has none).
        var writer: EventStreamWriter?
        /// Its credential ended: the writer is finished, an export's next piece throws.
        var revoked = false
    }

    private struct Count: Hashable {
        let userID: String
        let kind: Kind
    }

    private struct State {
        var slots: [Int: Slot] = [:]
        var counts: [Count: Int] = [:]
        var nextID = 0
    }

    let limits: StreamLimits
    /// Whether the caller's credential still exists, asked once a slot is taken: a revoke whose
    /// `end` ran between the request's authentication and its admission found no slot to end, and
    /// this second look refuses the stream instead (401). nil: no check (tests of the counting).
    private let isLive: (@Sendable (Caller) throws -> Bool)?
    private let state = Mutex(State())

    /// Seconds a refused client is told to wait: a slot frees when one of the user's streams ends
    /// (a tab closed, a reply done), which a retry cannot hurry.
    static let streamRetryAfter = 5
    /// An export ends within seconds of its client reading it.
    static let exportRetryAfter = 2

    package init(limits: StreamLimits, isLive: (@Sendable (Caller) throws -> Bool)? = nil) {
        self.limits = limits
        self.isLive = isLive
    }

    // MARK: - Admission

    /// A slot for one stream (or export) of `caller`, or 429 `too_many_streams` (`too_many_exports`)
    /// with `Retry-After` when the user holds the limit already. Never evicts: the user's own tabs
    /// would knock each other off.
    package func admit(_ caller: Caller, _ kind: Kind) throws -> StreamTicket {
        let key = Count(userID: caller.userID, kind: kind)
        let limit = limit(of: kind)
        let id: Int? = state.withLock { state in
            let held = state.counts[key] ?? 0
            guard held < limit else { return nil }
            state.counts[key] = held + 1
            let id = state.nextID
            state.nextID += 1
            state.slots[id] = Slot(userID: caller.userID, credential: caller.credential, kind: kind)
            return id
        }
        guard let id else { throw Self.refusal(kind, limit: limit) }
        let ticket = StreamTicket(id: id, streams: self)
        // Taken before the look, so a revoke from now on finds the slot; released (deinit) if refused.
        if let isLive, !(try isLive(caller)) { throw APIErrors.unauthenticated }
        return ticket
    }

    /// Streams (or exports) `userID` holds now.
    func count(of userID: String, _ kind: Kind) -> Int {
        state.withLock { $0.counts[Count(userID: userID, kind: kind)] ?? 0 }
    }

    // MARK: - Ending by credential

    /// Ends the streams and exports of `userID` opened with a credential `ends` picks: a stream after
    /// its queued bytes (EventSource then reconnects, and without a live credential gets 401), an
    /// export at its next piece (its body is cut). Returns how many were ended.
    @discardableResult
    package func end(of userID: String, where ends: (Caller.Credential) -> Bool = { _ in true }) -> Int {
        let (count, writers) = state.withLock { state -> (Int, [EventStreamWriter]) in
            var count = 0
            var writers: [EventStreamWriter] = []
            for (id, slot) in state.slots where slot.userID == userID && !slot.revoked && ends(slot.credential) {
                state.slots[id]?.revoked = true
                count += 1
                if let writer = slot.writer { writers.append(writer) }
            }
            return (count, writers)
        }
        for writer in writers { writer.finish() }
        return count
    }

    // MARK: - Tickets

    /// Remembers the started stream's writer; finishes it at once if its credential ended meanwhile.
    func attach(_ id: Int, _ writer: EventStreamWriter) {
        let revoked = state.withLock { state -> Bool in
            state.slots[id]?.writer = writer
            return state.slots[id]?.revoked ?? true
        }
        if revoked { writer.finish() }
    }

    func isRevoked(_ id: Int) -> Bool {
        state.withLock { $0.slots[id]?.revoked ?? true }
    }

    /// Frees the slot (called once per ticket).
    func release(_ id: Int) {
        state.withLock { state in
            guard let slot = state.slots.removeValue(forKey: id) else { return }
            let key = Count(userID: slot.userID, kind: slot.kind)
            let held = (state.counts[key] ?? 1) - 1
            state.counts[key] = held > 0 ? held : nil
        }
    }

    // MARK: - Limits

    private func limit(of kind: Kind) -> Int {
        switch kind {
        case .stream: limits.maxStreamsPerUser
        case .export: limits.maxExportsPerUser
        }
    }

    private static func refusal(_ kind: Kind, limit: Int) -> HTTPError {
        switch kind {
        case .stream:
            HTTPError(status: 429, code: "too_many_streams",
                      message: "At most \(limit) of your streams may be open at once (PARLEY_MAX_STREAMS_PER_USER); "
                        + "close a tab or another stream and try again.",
                      headers: [HTTPError.Header("Retry-After", String(streamRetryAfter))])
        case .export:
            HTTPError(status: 429, code: "too_many_exports",
                      message: "At most \(limit) of your exports may run at once (PARLEY_MAX_EXPORTS_PER_USER); "
                        + "try again when one has finished.",
                      headers: [HTTPError.Header("Retry-After", String(exportRetryAfter))])
        }
    }
}
