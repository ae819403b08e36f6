import Foundation
import ParleyA2UI
import ParleyMarkdown
import ParleyOutcome
import ParleyPrimitives
import ParleyProviders
import ParleyStore

/// One reply being generated for one assistant message. It outlives every browser connection: it
/// consumes the provider's events, renders them through `StableMarkdown`, logs them for replay, fans
/// them out to any number of subscribers and ends by writing the final state to the store once.
///
/// The jobs are value types it composes and orders: `ReplyText` (answer, reasoning, byte budget,
/// Markdown, what is stored), `FrameClock` (one frame per interval), `EventLog` (exact replay) and
/// `Subscribers` (fan-out). Each is tested on its own, without a server. Frame timers are entries in
/// the shared `FrameTicker`, not a sleeping task each.
///
/// Concurrency: an actor; every provider event, frame, subscription and stop is serialised on it, so
/// `stop` sees exactly the text that was received before it and nothing after.
public actor Generation: TickerTarget {
    public nonisolated let messageID: String
    public nonisolated let conversationID: String
    public nonisolated let owner: String
    let model: String
    /// Where the final state is written (the store).
    let recorder: any ReplyRecorder
    let limits: GenerationLimits
    let ticker: FrameTicker

    // MARK: - Parts
    /// The streaming text part: answer, reasoning, the frame being gathered and the byte budget.
    var text: ReplyText
    /// The closed parts (text before a tool call, tool calls) and the rounds so far.
    var parts: ReplyParts
    /// The tools this reply may call, and who runs them.
    let toolbox: Toolbox
    let runner: (any ToolRunner)?
    let renderer: MarkdownRenderer
    /// The surfaces of `parley/render_ui` calls (nil when the tool is not offered).
    var surfaces: SurfaceSession?
    /// The parts version the last confirmed flush wrote.
    private var storedPartsVersion = 0
    private var clock: FrameClock
    /// The ticker's wake-ups (`timeUp`), read by the frame loop that the first armed timer starts.
    nonisolated let wakeups: AsyncStream<Void>.Continuation
    /// Taken by the frame loop when it starts.
    var pendingWakeups: AsyncStream<Void>?
    /// When the provisional render the budget held back is due (`ProvisionalTail.isOwed`); its timer is armed.
    private var owedTailDue: ContinuousClock.Instant?
    /// Every event since the start, for exact replay.
    var log: EventLog
    var ids: EventIDClock
    var subscribers = Subscribers()

    /// The log probabilities the upstream sent with this run's answer (asked for by a /v1 call), in
    /// order, at most `limits.maxLogprobItems`.
    private(set) var logprobItems: [JSON] = []
    /// Set once items past `maxLogprobItems` were dropped (logged once).
    private var droppedLogprobs = false

    // MARK: - Outcome
    var finishReason: FinishReason?
    /// Token counts summed over the rounds.
    var usage: Usage?
    var outcome: GenerationOutcome?
    /// Set while `finish` writes the end (it waits for a store that is down): nothing else may end it.
    var ending = false
    /// Set by a shutdown while the end waits for the store: the write is given up.
    var endGivenUp = false
    /// The ended reply as late subscribers get it (set with `outcome`).
    var finished: FinishedReply?
    /// The id of the last event before the final `error`/`done`: the id a finished snapshot carries.
    var finalStateID: Int64 = 0
    /// The id of the logged `error` event of a failed reply (replayed to late subscribers with it).
    var errorEventID: Int64 = 0
    var upstream: Task<Void, Never>?
    var onEnd: (@Sendable (String, Int64) async -> Void)?
    /// Callers of `finalOutcome()` waiting for the end.
    var outcomeWaiters: [CheckedContinuation<GenerationOutcome, Never>] = []

    /// - Parameters:
    ///   - message: the assistant message; its content is non-empty when continuing.
    ///   - onEnd: runs once, after the final state is stored, with the message id and the last event id.
    ///   - after: ids start above this (the previous run's last id, when it is still known).
    ///   - toolbox, runner: the tools the reply may call and what runs them (none by default).
    ///   - surfaceBoard: the branch's surfaces before this reply, when it may draw (`parley/render_ui`).
    ///   - relay: with several nodes, where every batch goes (subscribers follow it, not this actor).
    init(message: Message, owner: String, model: String, recorder: any ReplyRecorder, limits: GenerationLimits,
         renderer: MarkdownRenderer, ticker: FrameTicker, after previousID: Int64 = 0,
         toolbox: Toolbox = .none, runner: (any ToolRunner)? = nil, surfaceBoard: SurfaceBoard? = nil,
         relay: (any ReplyRelay)? = nil, onEnd: @escaping @Sendable (String, Int64) async -> Void) {
        self.onEnd = onEnd
        self.messageID = message.id
        self.conversationID = message.conversationID
        self.owner = owner
        self.model = model
        self.recorder = recorder
        self.limits = limits
        self.ticker = ticker
        self.toolbox = toolbox
        self.runner = runner
        self.renderer = renderer
        self.surfaces = surfaceBoard.map(SurfaceSession.init(board:))
        let split = ReplyParts.split(message.parts)
        let parts = ReplyParts(closed: split.closed, renderer: renderer)
        let text = ReplyText(content: split.text, reasoning: split.reasoning, renderer: renderer,
                             room: limits.maxReplyBytes)
        self.clock = FrameClock(interval: limits.frameInterval)
        // The newest wake-up is enough: a tick sends whatever is due.
        (pendingWakeups, wakeups) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        var ids = EventIDClock(after: previousID)
        // A resumed or continued run's log starts at the previous run's last id, so a client that saw that
        // run to its `done` and reopens from its last id is replayed this run exactly (from its snapshot).
        var log = EventLog(baseID: previousID > 0 ? previousID : ids.next())
        if !message.content.isEmpty || !message.reasoning.isEmpty || parts.hasToolCalls || relay != nil {
            // A continued message starts its log with the full state, so a client that saw the earlier
            // `done` replaces what it shows instead of appending to it. Through a relay every run starts
            // so: a tab on any node that follows the run from its start begins with the state it starts from.
            let snapshot = Self.snapshot(of: message.id, parts: parts, text: text)
            log.append(GenerationEvent(id: ids.next(), payload: .snapshot(snapshot)))
        }
        self.parts = parts
        self.text = text
        self.ids = ids
        self.log = log
        if let relay {
            subscribers.relay = (message.id, relay)
            relay.begin(messageID: message.id, baseID: log.baseID, events: log.events(after: log.baseID) ?? [])
        }
    }

    /// Adds received text to the next frame. Returns false when it reached `maxReplyBytes`: the
    /// reply then ends as `length`, and leaving the event loop drops the provider stream, which
    /// aborts the upstream call.
    func receive(_ piece: String, as part: ReplyText.Part = .answer) -> Bool {
        guard text.receive(piece, as: part) else {
            finishReason = .length
            return false
        }
        switch clock.pieceArrived(at: .now) {
        case .emitNow:
            emitFrame()
        case .schedule(let due):
            arm(after: due - .now)
        case .wait:
            break
        }
        return true
    }

    /// Log probabilities of the text just received: the frame holding that text is sent first, then
    /// them (a logged `logprobs` event), so a /v1 relay writes them after the text they describe. Items
    /// past `maxLogprobItems` are dropped.
    func receiveLogprobs(_ items: [JSON]) {
        let room = max(0, limits.maxLogprobItems - logprobItems.count)
        let kept = items.count <= room ? items : Array(items.prefix(room))
        if kept.count < items.count, !droppedLogprobs {
            droppedLogprobs = true
            FileHandle.standardError.write(Data(("parley: reply \(messageID): log probabilities past "
                + "\(limits.maxLogprobItems) items dropped\n").utf8))
        }
        guard !kept.isEmpty else { return }
        emitFrame()
        logprobItems += kept
        subscribers.deliver([event(.logprobs(kept))])
    }

    /// The frame timer armed in `receive` fired (the frame loop, woken by the `FrameTicker`).
    func tick() {
        clock.timerFired()
        guard outcome == nil, !ending else { return }
        emitFrame()
        // The held-back provisional render, once its lag is over (the ticker may fire a little early).
        if let due = owedTailDue, .now >= due - .milliseconds(1) {
            owedTailDue = nil
            if case .html(let suffix, let keep) = text.renderOwedTailHTML() {
                subscribers.deliver([provisionalEvent(suffix, keep: keep)])
            }
        }
    }

    /// Sends the gathered reasoning and answer as one batch: reasoning, block, tail (or tail_append),
    /// delta and, last, the provisional tail_html (unlogged), so a page swaps a committed block for
    /// the provisional HTML it replaces within one batch.
    func emitFrame() {
        guard let frame = text.takeFrame() else { return }
        clock.emitted(at: .now)
        var batch: [GenerationEvent] = []
        if let reasoning = frame.reasoning {
            batch.append(event(.reasoning(reasoning)))
        }
        for block in frame.blocks {
            batch.append(event(.block(index: parts.closedBlocks.count + block.index, html: block.html)))
        }
        switch frame.tail {
        case .unchanged: break
        case .replaced(let tail): batch.append(event(.tail(tail)))
        case .appended(let text): batch.append(event(.tailAppend(text)))
        }
        if let answer = frame.answer {
            batch.append(event(.delta(answer)))
        }
        if case .html(let suffix, let keep) = frame.tailHTML {
            batch.append(provisionalEvent(suffix, keep: keep))
        }
        subscribers.deliver(batch)
        if text.owesTailHTML, owedTailDue == nil {
            let lag = text.provisional.owedLag
            owedTailDue = .now + lag
            arm(after: lag)
        }
    }

    /// A `tail_html` event: not logged, and its id (the last logged one) is never sent.
    func provisionalEvent(_ html: String?, keep: Int = 0) -> GenerationEvent {
        GenerationEvent(id: log.lastID, payload: .tailHTML(html, keep: keep))
    }

    func event(_ payload: GenerationEvent.Payload) -> GenerationEvent {
        let event = GenerationEvent(id: ids.next(), payload: payload)
        log.append(event)
        return event
    }

    // MARK: - Subscribing

    /// How the reply ended, once it has and `onEnd` has run: the one way to wait for the end without
    /// receiving every frame.
    func finalOutcome() async -> GenerationOutcome {
        if let outcome, onEnd == nil { return outcome }
        return await withCheckedContinuation { outcomeWaiters.append($0) }
    }

    /// Attaches a subscriber. It first receives either the exact events after `lastEventID` or a
    /// snapshot, then every new batch. `deliver` returns false when the subscriber has gone.
    /// Returns a token for `unsubscribe`, or nil when the generation had already ended (the subscriber
    /// then got the snapshot and `done` and nothing more will come).
    func subscribe(after lastEventID: Int64?,
                   deliver: @escaping @Sendable ([GenerationEvent]) -> Bool) -> Int? {
        let initial: [GenerationEvent]
        if let lastEventID, let replay = log.events(after: lastEventID) {
            // The replay has every logged event; the current provisional HTML comes after it (a
            // client that resumes loses nothing, and `tail_html` is never logged).
            initial = outcome == nil ? replay + [provisionalEvent(text.provisional.html)] : replay
        } else if let finished {
            initial = finished.events(snapshotID: finalStateID, errorID: errorEventID, doneID: log.lastID)
        } else {
            initial = [liveSnapshotEvent()]
        }
        guard deliver(initial), outcome == nil else { return nil }
        return subscribers.add(deliver)
    }

    func unsubscribe(_ token: Int) {
        subscribers.remove(token)
    }

    /// The state of a live reply as of the last logged event.
    private func liveSnapshotEvent() -> GenerationEvent {
        GenerationEvent(id: log.lastID, payload: .snapshot(snapshot()))
    }

    func snapshot() -> GenerationSnapshot {
        Self.snapshot(of: messageID, parts: parts, text: text)
    }

    /// The live state: every block so far, the streaming tail, the parts.
    private static func snapshot(of messageID: String, parts: ReplyParts, text: ReplyText) -> GenerationSnapshot {
        GenerationSnapshot(messageID: messageID, status: .streaming, blocks: parts.closedBlocks + text.markdown.blocks,
                           tail: text.markdown.tail, tailHTML: text.provisional.html,
                           content: parts.content(text: text.answer), reasoning: parts.reasoning(text.reasoning),
                           parts: parts.snapshot(text: text.answer, reasoning: text.reasoning,
                                                 liveBlocks: text.markdown.blocks.count))
    }

    // MARK: - Persistence

    /// The whole text and reasoning, and their size, when they grew since the last stored flush
    /// (group commit by `Generations.flush`, which confirms the size once the transaction has
    /// committed).
    func progress() -> (state: MessageProgress, bytes: Int, partsVersion: Int)? {
        guard outcome == nil, !ending else { return nil }
        let unstored = text.unstoredProgress()
        guard parts.hasToolCalls else {
            guard let unstored else { return nil }
            return (MessageProgress(id: messageID, content: unstored.content, reasoning: unstored.reasoning),
                    unstored.bytes, parts.version)
        }
        guard unstored != nil || parts.version != storedPartsVersion else { return nil }
        // With tool calls, the parts are written with the text (their closed text plus what streams now).
        let current = unstored ?? (text.answer, text.reasoning, text.receivedBytes)
        return (MessageProgress(id: messageID, content: parts.content(text: current.content),
                                reasoning: parts.reasoning(current.reasoning),
                                parts: parts.all(text: current.content, reasoning: current.reasoning, html: nil)),
                current.bytes, parts.version)
    }

    /// Records that the text and reasoning up to `bytes`, and the parts of `partsVersion`, are stored.
    func confirmProgress(_ bytes: Int, partsVersion: Int) {
        text.confirmStored(bytes)
        storedPartsVersion = max(storedPartsVersion, partsVersion)
    }

    /// The id the event log starts from (`log.events(after:)` of it replays the whole run).
    var logBaseID: Int64 { log.baseID }

    /// The last event id, so a continued reply's clock starts above it even if the wall clock stepped back.
    var lastEventID: Int64 { log.lastID }
}
