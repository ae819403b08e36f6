import ParleyA2UI
import Foundation
import ParleyMarkdown
import ParleyPrimitives
import ParleyProviders
import ParleyStore

/// Module ParleyGeneration: provider events turned into stored, streamed replies (start, caps,
/// frames, event log, fan-out, group commit). It must never know HTTP, SSE framing, JSON on the wire,
/// libcurl or SQL, nor who the caller is beyond a user id.
///
/// Every live generation: the registry and its caps, and the operations that end, follow or look up
/// a reply (stop, subscribe, `outcome(of:)`). Starting is `Generations+Start.swift` (send, regenerate,
/// continue through one path); the group commit is `ProgressFlusher`, finished replies kept for replay
/// are `RetainedReplies`.
///
/// Concurrency: an actor. Store calls are short synchronous SQLite transactions made from it.
public actor Generations: TickerTarget {
    let store: Store
    let providers: ProviderRegistry
    let limits: GenerationLimits
    /// The bounds on surfaces (the action route reads them too).
    public nonisolated var surfaceLimits: SurfaceLimits { limits.surfaces }
    let renderer: MarkdownRenderer
    let context: ContextBuilder
    /// What runs a conversation's tools (nil: no tools are offered).
    let tools: (any ToolRunner)?
    /// Live generations by message id.
    var live: [String: Generation] = [:]
    /// Recently finished generations kept for exact replay, by message id, with their last event id.
    var retained: RetainedReplies
    /// The time `retained` reads (injectable for tests).
    let clock: RetentionClock
    /// Starts admitted but not yet registered (their rows are being written): they count against
    /// the caps, and a stop-all or shutdown that comes meanwhile cancels them.
    var reservations: [Int: Reservation] = [:]
    var nextReservation = 0
    let flusher: ProgressFlusher
    private var flushing: Task<Void, Never>?
    /// Every live reply's frame timer, and the expiry of retained replies.
    let ticker = FrameTicker()
    /// Set by `shutdown`: no reply starts after it.
    var shuttingDown = false
    /// With several nodes: what carries every reply's events to every node's subscribers (nil: this process).
    let relay: (any ReplyRelay)?
    /// The live replies' ids and owners, for readers off the actor (the lease renewal).
    public nonisolated let liveSet = LiveReplies()

    /// The message of the error a reply cut by a graceful shutdown ends with (`ReplyErrorCode.serverShutdown`).
    static let shutdownMessage = "The server shut down during the reply."

    deinit {
        ticker.stop()
    }

    /// - Parameter clock: when finished replies are released (`limits.retainFinished` after their end).
    /// - Parameter tools: runs the tools conversations enable (nil: replies are offered none).
    /// - Parameter files: the files user messages carry, sent with them (`NoAttachments`: none).
    /// - Parameter relay: with several nodes, what carries replies' events between them (`ReplyRelay`).
    public init(store: Store, providers: ProviderRegistry, limits: GenerationLimits,
                renderer: MarkdownRenderer = MarkdownRenderer(), clock: RetentionClock = .continuous,
                tools: (any ToolRunner)? = nil, files: any AttachmentSource = NoAttachments(),
                relay: (any ReplyRelay)? = nil) {
        self.tools = tools
        self.relay = relay
        self.store = store
        self.providers = providers
        self.limits = limits
        self.renderer = renderer
        self.context = ContextBuilder(budget: limits.contextBudgetCharacters, files: files)
        self.retained = RetainedReplies(keep: limits.retainFinished)
        self.clock = clock
        self.flusher = ProgressFlusher(recorder: store, interval: limits.flushInterval)
    }

    // MARK: - Registry

    /// Adds a reply that has just started (step 4 of `start`) and makes sure progress is flushed.
    func addLive(_ generation: Generation) {
        live[generation.messageID] = generation
        // Read only by the lease renewal of several nodes: one node keeps no list.
        if relay != nil { liveSet.add(generation.messageID, owner: generation.owner) }
        if flushing == nil { flushing = flusher.loop(self) }
    }

    /// A reply ended: it leaves the live set and is kept for replay for `retainFinished`, released by the ticker.
    func ended(_ messageID: String, lastEventID: Int64) {
        guard let generation = live.removeValue(forKey: messageID) else { return }
        liveSet.remove(messageID)
        relay?.moveLive(owner: generation.owner, from: messageID, to: nil)
        retained.retain(generation, lastEventID: lastEventID, at: clock.now())
        ticker.schedule(self, after: limits.retainFinished)
    }

    /// A retained reply's time may be up (called by the `FrameTicker`; rare, so a task is fine).
    nonisolated func timeUp() {
        Task { await self.expireRetained() }
    }

    /// Releases the finished replies whose `retainFinished` is over by `clock`. The ticker calls it; a
    /// test calls it after moving its clock.
    public func expireRetained() {
        retained.expire(at: clock.now())
    }

    /// Finished replies still kept for exact replay.
    public var retainedCount: Int { retained.count }

    // MARK: - Stopping

    /// Aborts the upstream call at once; the message keeps exactly the text streamed so far.
    /// A finished message is returned unchanged.
    public func stop(messageID: String) async throws -> Message {
        let message = try assistantMessage(messageID)
        if let generation = live[messageID] {
            await generation.stop()
            return try store.message(id: messageID) ?? message
        }
        guard message.status == .streaming else { return message }
        if let relay, relay.requestStop(messageID: messageID) {
            // Another node runs it: it stops it there; the answer is the row it writes.
            return try await stoppedElsewhere(message)
        }
        // A `streaming` row with no live generation has nothing left that could finish it (its final
        // write failed): stop ends it here with its stored text, so a stop answer never says `streaming`.
        return try store.finishMessage(id: messageID, content: message.content, status: .stopped,
                                       html: renderer.render(message.content))
    }

    /// A stop another node asked of this one (several nodes): the reply live here ends `stopped`. Not
    /// read from the store first, as `stop` does: that node's delete of the conversation may have removed
    /// the rows already, and the upstream call must end all the same.
    public func stopAsked(messageID: String) async {
        await live[messageID]?.stop()
    }

    /// The row of a reply another node was asked to stop, once that node wrote its end. A node that has not
    /// within 5 s (it died, and no node took the reply over yet) does not get to: the reply ends `stopped`
    /// here with its stored text, so no takeover continues what the user stopped.
    private func stoppedElsewhere(_ message: Message) async throws -> Message {
        let deadline = ContinuousClock.now + .seconds(5)
        var pause = Duration.milliseconds(10)
        while ContinuousClock.now < deadline {
            // 10 ms first (a live node answers in a few), then less often: a dead node's 5 s read the row ~30 times.
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(200))
            guard let current = try store.message(id: message.id) else { throw GenerationError.messageNotFound }
            if current.status != .streaming { return current }
        }
        guard let current = try store.message(id: message.id) else { throw GenerationError.messageNotFound }
        guard current.status == .streaming, live[message.id] == nil else { return current }
        do throws(StoreError) {
            return try store.finishMessage(id: current.id, content: current.content, status: .stopped,
                                           html: renderer.render(current.content))
        } catch {
            // Its node (or the one that took it over) wrote its end meanwhile: that row is the answer.
            guard case .conflict = error else { throw error }
            return try store.message(id: message.id) ?? current
        }
    }

    /// Stops every live reply of a conversation (it is being deleted).
    public func stopAll(conversationID: String) async {
        for (token, reservation) in reservations where reservation.conversationID == conversationID {
            reservations[token]?.cancelled = .stopped
        }
        for generation in live.values where generation.conversationID == conversationID {
            await generation.stop()
        }
        stopElsewhere { $0.conversationID == conversationID }
    }

    /// With several nodes: asks the nodes running the `streaming` replies `matching` to stop them (a
    /// delete or a disabled account on this node reaches replies running on another). Returns how many.
    @discardableResult
    private func stopElsewhere(_ matching: (StreamingReply) -> Bool) -> Int {
        guard let relay, let streaming = try? store.streamingReplies() else { return 0 }
        return streaming.filter { live[$0.messageID] == nil && matching($0) }
            .filter { relay.requestStop(messageID: $0.messageID) }.count
    }

    /// Stops every live reply of one user (their account was just disabled); returns how many. Call it
    /// after the account is marked disabled: a reply that starts later is refused (`ownerDisabled`).
    @discardableResult
    public func stopAll(owner: String) async -> Int {
        var reserved = 0
        for (token, reservation) in reservations where reservation.owner == owner {
            reservations[token]?.cancelled = .stopped
            reserved += 1
        }
        let theirs = live.values.filter { $0.owner == owner }
        for generation in theirs {
            await generation.stop()
        }
        let elsewhere = stopElsewhere { $0.ownerID == owner }
        return theirs.count + reserved + elsewhere
    }

    /// Ends every live generation as `interrupted` and writes it (graceful shutdown); no reply starts after.
    public func shutdown() async {
        shuttingDown = true
        flushing?.cancel()
        for token in reservations.keys {
            reservations[token]?.cancelled = .interrupted
        }
        for generation in live.values {
            await generation.interrupt()
        }
    }

    // MARK: - Subscribing

    /// Attaches `deliver` to the message's event stream: the missed events after `lastEventID` when
    /// they can be replayed exactly, otherwise a snapshot; then live events until `done`.
    /// Returns a handle to detach, or nil when everything was delivered already (finished message).
    public func subscribe(messageID: String, after lastEventID: Int64?,
                          deliver: @escaping @Sendable ([GenerationEvent]) -> Bool) async throws -> Subscription? {
        if let relay, let following = try await followRelay(relay, messageID, after: lastEventID, deliver: deliver) {
            return following
        }
        if let generation = live[messageID] ?? retained.generation(for: messageID) {
            guard let token = await generation.subscribe(after: lastEventID, deliver: deliver) else { return nil }
            return Subscription { await generation.unsubscribe(token) }
        }
        // Read in the same actor turn as the look-up above: a continue changes the row and registers
        // its generation in one turn, so this is the row before the continue or after it, never the
        // `streaming` row of a generation not yet registered (once read as `interrupted`).
        guard let message = try store.message(id: messageID) else { throw GenerationError.messageNotFound }
        _ = deliver(await finishedEvents(message))
        return nil
    }

    /// Follows the message through the relay (several nodes): a reply live here, retained here, or
    /// `streaming` in the store (live on another node) is followed there, its stream waited for if not
    /// written yet; any other is followed there if the relay still holds it. nil when the relay has no
    /// stream for it: the caller goes on as on one node (the stored reply).
    private func followRelay(_ relay: any ReplyRelay, _ messageID: String, after lastEventID: Int64?,
                             deliver: @escaping @Sendable ([GenerationEvent]) -> Bool) async throws -> Subscription?? {
        var running = live[messageID] != nil || retained.generation(for: messageID) != nil
        if !running {
            guard let message = try store.message(id: messageID) else { throw GenerationError.messageNotFound }
            running = message.status == .streaming
        }
        switch await relay.follow(messageID: messageID, after: lastEventID, waiting: running, deliver: deliver) {
        case .following(let cancel): return .some(Subscription { cancel() })
        case .finished: return .some(nil)
        case .absent: return nil
        }
    }

    /// Snapshot and `done` for a message no generation holds (finished, or from before a restart).
    /// Nonisolated, so rendering a long finished reply never holds up the actor (sends, stops and
    /// other subscriptions go on meanwhile).
    private nonisolated func finishedEvents(_ message: Message) async -> [GenerationEvent] {
        var ids = EventIDClock(after: EventIDClock.ceiling(writtenAt: message.updatedAt))
        let reply = FinishedReply(stored: message, renderer: renderer)
        return reply.events(snapshotID: ids.next(), errorID: ids.next(), doneID: ids.next())
    }

    // MARK: - Following

    /// How the reply ends, once it has, without receiving its frames: the live reply's outcome when it
    /// comes (by then it is no longer live: its slot is free), a retained one's at once, or the stored row's (a `streaming` row no generation holds reads
    /// as `interrupted`, as for a late subscriber). Throws `messageNotFound` for an unknown id.
    public func outcome(of messageID: String) async throws -> GenerationOutcome {
        if let generation = live[messageID] ?? retained.generation(for: messageID) {
            return await generation.finalOutcome()
        }
        // Read in this actor turn, like `subscribe`: never a continue's row before its generation is registered.
        guard let message = try store.message(id: messageID) else { throw GenerationError.messageNotFound }
        return await storedOutcome(message)
    }

    /// A stored reply's outcome; rendered off the actor to count its blocks.
    private nonisolated func storedOutcome(_ message: Message) async -> GenerationOutcome {
        FinishedReply(stored: message, renderer: renderer).outcome
    }

    /// The log probabilities the live or retained run of the message collected (`logprobs: true` on
    /// /v1), in order; nil when no generation holds it any more. A caller that waited for the outcome
    /// reads them here: a finished reply is retained for `retainFinished`.
    public func logprobs(of messageID: String) async -> [JSON]? {
        guard let generation = live[messageID] ?? retained.generation(for: messageID) else { return nil }
        return await generation.logprobItems
    }

    /// The id the live or retained run's event log starts from: subscribing after it replays every event
    /// of the run (its `logprobs` too, which a snapshot does not carry); nil when no generation holds it.
    public func logStartID(of messageID: String) async -> Int64? {
        guard let generation = live[messageID] ?? retained.generation(for: messageID) else { return nil }
        return await generation.logBaseID
    }

    // MARK: - Persistence (group commit)

    /// Writes the text of every live generation that grew, in one transaction (`ProgressFlusher`).
    public func flush() async {
        await flusher.flush(Array(live.values))
    }

    // MARK: - Helpers

    /// Number of live generations.
    public var liveCount: Int { live.count }
}

/// A subscriber's attachment to a generation or to the relay; `cancel` detaches it (the client went away).
public struct Subscription: Sendable {
    let detach: @Sendable () async -> Void

    public func cancel() async {
        await detach()
    }
}

