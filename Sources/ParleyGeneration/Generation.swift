import Foundation
import ParleyMarkdown
import ParleyProviders
import ParleyStore

/// One reply being generated for one assistant message. It outlives every browser connection: it
/// consumes the provider's events, renders them through `StableMarkdown`, logs them for replay, fans
/// them out to any number of subscribers and ends by writing the final state to the store once.
///
/// Concurrency: an actor; every provider event, frame, subscription and stop is serialised on it, so
/// `stop` sees exactly the text that was received before it and nothing after.
public actor Generation {
    public nonisolated let messageID: String
    public nonisolated let conversationID: String
    public nonisolated let owner: String
    private let model: String
    private let store: Store
    private let limits: GenerationLimits

    // MARK: - Text and rendering state
    /// Text already turned into events (blocks, tail, delta).
    private var framed: String
    /// Text received but not yet sent: gathered until the end of the current frame.
    private var pending = ""
    /// Reasoning already sent, and reasoning gathered for the current frame (plain text, no Markdown).
    private var reasoning: String
    private var pendingReasoning = ""
    /// Bytes of text and reasoning received over the message's life: what progress flushes track.
    private var receivedBytes: Int
    /// Bytes this run may still add before the reply is cut (`maxReplyBytes` per run, so a reply
    /// cut for length can be continued).
    private var room: Int
    private var markdown: StableMarkdown
    private var lastFrameAt: ContinuousClock.Instant?
    private var frameScheduled = false
    private var persistedBytes: Int

    // MARK: - Log and subscribers
    private var log: EventLog
    private var ids: EventIDClock
    private var subscribers: [Int: @Sendable ([GenerationEvent]) -> Bool] = [:]
    private var nextSubscriberID = 0

    // MARK: - Outcome
    private var finishReason: String?
    private var usage: Usage?
    private var outcome: GenerationOutcome?
    /// The ended reply as late subscribers get it (set with `outcome`).
    private var finished: FinishedReply?
    /// The id of the last event before the final `error`/`done`: the id a finished snapshot carries.
    private var finalStateID: Int64 = 0
    /// The id of the logged `error` event of a failed reply (replayed to late subscribers with it).
    private var errorEventID: Int64 = 0
    private var upstream: Task<Void, Never>?
    private var onEnd: (@Sendable (String) async -> Void)?

    /// - Parameters:
    ///   - message: the assistant message; its content is non-empty when continuing.
    ///   - onEnd: runs once, after the final state is stored.
    ///   - after: ids start above this (the previous run's last id, when it is still known).
    init(message: Message, owner: String, model: String, store: Store, limits: GenerationLimits,
         renderer: MarkdownRenderer, after previousID: Int64 = 0,
         onEnd: @escaping @Sendable (String) async -> Void) {
        self.onEnd = onEnd
        self.messageID = message.id
        self.conversationID = message.conversationID
        self.owner = owner
        self.model = model
        self.store = store
        self.limits = limits
        self.framed = message.content
        self.reasoning = message.reasoning
        self.receivedBytes = message.content.utf8.count + message.reasoning.utf8.count
        self.persistedBytes = self.receivedBytes
        self.room = limits.maxReplyBytes
        var markdown = StableMarkdown(renderer: renderer)
        if !message.content.isEmpty {
            _ = markdown.append(message.content)
        }
        self.markdown = markdown
        var ids = EventIDClock(after: previousID)
        let base = ids.next()
        self.ids = ids
        var log = EventLog(baseID: base)
        if !message.content.isEmpty || !message.reasoning.isEmpty {
            // A continued message starts its log with the full state, so a client that saw the earlier
            // `done` replaces what it shows instead of appending to it.
            let snapshot = GenerationSnapshot(messageID: message.id, status: .streaming,
                                              blocks: markdown.blocks, tail: markdown.tail,
                                              content: message.content, reasoning: message.reasoning)
            log.append(GenerationEvent(id: self.ids.next(), payload: .snapshot(snapshot)))
        }
        self.log = log
    }

    // MARK: - Running

    /// Opens the provider stream and starts consuming it, unless the generation was already
    /// stopped: the upstream call is only made once nothing can end the generation without
    /// cancelling it.
    func run(_ open: @Sendable () -> AsyncThrowingStream<ProviderEvent, Error>) {
        guard outcome == nil, upstream == nil else { return }
        let events = open()
        upstream = Task { await self.consume(events) }
    }

    private func consume(_ events: AsyncThrowingStream<ProviderEvent, Error>) async {
        do {
            for try await event in events {
                guard outcome == nil else { return }
                guard handle(event) else { break }
            }
            guard outcome == nil else { return }
            // Cancelled by something other than stop or shutdown (which set the outcome first).
            if Task.isCancelled {
                await finish(status: .failed, errorCode: ProviderError.Code.cancelled.rawValue,
                             errorMessage: "The reply was cancelled.")
            } else {
                await finish(status: .complete)
            }
        } catch let error as ProviderError {
            guard outcome == nil else { return }
            let status: MessageStatus = error.code == .upstreamInterrupted ? .interrupted : .failed
            await finish(status: status, errorCode: error.code.rawValue, errorMessage: error.message)
        } catch {
            guard outcome == nil else { return }
            await finish(status: .failed, errorCode: ProviderError.Code.upstreamError.rawValue,
                         errorMessage: "The model's stream failed.")
        }
    }

    /// Returns false when the reply must end here (it reached `maxReplyBytes`).
    private func handle(_ event: ProviderEvent) -> Bool {
        switch event {
        case .text(let text):
            return receive(text)
        case .finish(let reason):
            finishReason = reason.storedValue
        case .usage(let reported):
            usage = reported
        case .reasoning(let text):
            return receive(text, as: .reasoning)
        case .toolCall:
            // Not shown or stored: Parley sends no tools, so a tool call is only its finish reason.
            break
        }
        return true
    }

    /// Which of the two texts a piece belongs to.
    private enum Part {
        case answer
        case reasoning
    }

    /// Appends received text, cutting it at `maxReplyBytes`: the reply then ends as `length` and
    /// leaving the event loop drops the provider stream, which aborts the upstream call. Reasoning
    /// shares the budget with the answer: a model that only thinks is cut like one that only talks.
    private func receive(_ text: String, as part: Part = .answer) -> Bool {
        let fits = text.utf8.count <= room
        let accepted = fits ? text : String(text.prefix(utf8Bytes: room))
        switch part {
        case .answer: pending += accepted
        case .reasoning: pendingReasoning += accepted
        }
        receivedBytes += accepted.utf8.count
        room -= accepted.utf8.count
        guard fits else {
            finishReason = "length"
            return false
        }
        scheduleFrame()
        return true
    }

    // MARK: - Frames: one write per interval however fast the model is

    private func scheduleFrame() {
        guard !frameScheduled else { return }
        let now = ContinuousClock.now
        if let last = lastFrameAt, now - last < limits.frameInterval {
            frameScheduled = true
            let due = last + limits.frameInterval
            Task {
                try? await Task.sleep(until: due, clock: .continuous)
                self.frameTimerFired()
            }
        } else {
            emitFrame()
        }
    }

    private func frameTimerFired() {
        frameScheduled = false
        guard outcome == nil else { return }
        emitFrame()
    }

    /// Turns the pending reasoning and text into reasoning, block, tail and delta events and
    /// delivers them as one batch.
    private func emitFrame() {
        guard !pending.isEmpty || !pendingReasoning.isEmpty else { return }
        lastFrameAt = ContinuousClock.now
        var batch: [GenerationEvent] = []
        if !pendingReasoning.isEmpty {
            reasoning += pendingReasoning
            batch.append(event(.reasoning(pendingReasoning)))
            pendingReasoning = ""
        }
        guard !pending.isEmpty else {
            deliver(batch)
            return
        }
        let text = pending
        pending = ""
        framed += text
        let update = markdown.append(text)
        for block in update.blocks {
            batch.append(event(.block(index: block.index, html: block.html)))
        }
        switch update.tail {
        case .unchanged: break
        case .replaced(let tail): batch.append(event(.tail(tail)))
        case .appended(let text): batch.append(event(.tailAppend(text)))
        }
        batch.append(event(.delta(text)))
        deliver(batch)
    }

    private func event(_ payload: GenerationEvent.Payload) -> GenerationEvent {
        let event = GenerationEvent(id: ids.next(), payload: payload)
        log.append(event)
        return event
    }

    private func deliver(_ batch: [GenerationEvent]) {
        guard !batch.isEmpty else { return }
        for (key, send) in subscribers where !send(batch) {
            subscribers[key] = nil
        }
    }

    // MARK: - Ending

    /// Stops the upstream call at once and keeps exactly the text received so far.
    func stop() async {
        guard outcome == nil else { return }
        upstream?.cancel()
        await finish(status: .stopped)
    }

    /// Ends the generation as `interrupted` (graceful shutdown).
    func interrupt() async {
        guard outcome == nil else { return }
        upstream?.cancel()
        await finish(status: .interrupted, errorCode: "server_shutdown",
                     errorMessage: "The server shut down during the reply.")
    }

    private func finish(status: MessageStatus, errorCode: String? = nil, errorMessage: String? = nil) async {
        guard outcome == nil else { return }
        emitFrame()
        let final = markdown.finish()
        // After finish, `markdown.blocks` is the whole render: committed blocks patched, then the final ones.
        let blocks = markdown.blocks
        var batch: [GenerationEvent] = []
        let patch = final.patch.map { BlockPatch(index: $0.index, html: $0.html) }
        for block in final.blocks {
            batch.append(event(.block(index: block.index, html: block.html)))
        }
        finalStateID = log.lastID
        if let errorCode {
            let failure = event(.error(code: errorCode, message: errorMessage ?? ""))
            errorEventID = failure.id
            batch.append(failure)
        }
        let usageJSON = usage.map(Self.encode)
        let result = GenerationOutcome(status: status, finishReason: finishReason, usage: usageJSON,
                                       patch: patch, blockCount: final.blockCount,
                                       errorCode: errorCode, errorMessage: errorMessage)
        outcome = result
        finished = FinishedReply(messageID: messageID, content: framed, reasoning: reasoning, blocks: blocks,
                                 outcome: result)
        do {
            _ = try store.finishMessage(id: messageID, content: framed, reasoning: reasoning, status: status,
                                        finishReason: finishReason, usage: usageJSON, model: model,
                                        errorCode: errorCode, errorMessage: errorMessage,
                                        html: blocks.joined())
        } catch StoreError.notFound {
            // The conversation was deleted during the reply; nothing is left to write to.
        } catch {
            FileHandle.standardError.write(Data("parley: storing message \(messageID) failed: \(error)\n".utf8))
        }
        batch.append(event(.done(result)))
        deliver(batch)
        subscribers.removeAll()
        if let onEnd {
            self.onEnd = nil
            await onEnd(messageID)
        }
    }

    private static func encode(_ usage: Usage) -> String {
        var fields: [String] = []
        if let input = usage.inputTokens { fields.append("\"input_tokens\":\(input)") }
        if let output = usage.outputTokens { fields.append("\"output_tokens\":\(output)") }
        return "{" + fields.joined(separator: ",") + "}"
    }

    // MARK: - Subscribing

    /// Attaches a subscriber. It first receives either the exact events after `lastEventID` or a
    /// snapshot, then every new batch. `deliver` returns false when the subscriber has gone.
    /// Returns a token for `unsubscribe`, or nil when the generation had already ended (the subscriber
    /// then got the snapshot and `done` and nothing more will come).
    func subscribe(after lastEventID: Int64?,
                   deliver: @escaping @Sendable ([GenerationEvent]) -> Bool) -> Int? {
        let initial: [GenerationEvent]
        if let lastEventID, let replay = log.events(after: lastEventID) {
            initial = replay
        } else if let finished {
            initial = finished.events(snapshotID: finalStateID, errorID: errorEventID, doneID: log.lastID)
        } else {
            initial = [liveSnapshotEvent()]
        }
        guard deliver(initial), outcome == nil else { return nil }
        let token = nextSubscriberID
        nextSubscriberID += 1
        subscribers[token] = deliver
        return token
    }

    func unsubscribe(_ token: Int) {
        subscribers[token] = nil
    }

    /// The state of a live reply as of the last logged event.
    private func liveSnapshotEvent() -> GenerationEvent {
        let snapshot = GenerationSnapshot(messageID: messageID, status: .streaming, blocks: markdown.blocks,
                                          tail: markdown.tail, content: framed, reasoning: reasoning)
        return GenerationEvent(id: log.lastID, payload: .snapshot(snapshot))
    }

    // MARK: - Persistence

    /// The whole text and reasoning, and their size, when they grew since the last stored flush
    /// (group commit by `Generations.flush`, which confirms the size once the transaction has
    /// committed).
    func progress() -> (state: MessageProgress, bytes: Int)? {
        guard outcome == nil, receivedBytes != persistedBytes else { return nil }
        let state = MessageProgress(id: messageID, content: framed + pending,
                                    reasoning: reasoning + pendingReasoning)
        return (state, receivedBytes)
    }

    /// Records that the text and reasoning up to `bytes` are stored.
    func confirmProgress(_ bytes: Int) {
        persistedBytes = max(persistedBytes, bytes)
    }

    /// The last event id, so a continued reply's clock starts above it even if the wall clock stepped back.
    var lastEventID: Int64 { log.lastID }
}

extension FinishReason {
    /// The value stored in `messages.finish_reason` and sent in `done`.
    var storedValue: String {
        switch self {
        case .stop: "stop"
        case .length: "length"
        case .toolCalls: "tool_calls"
        case .contentFilter: "content_filter"
        case .other(let value): value
        }
    }
}

extension String {
    /// The longest prefix of at most `maxBytes` UTF-8 bytes that ends on a character boundary.
    func prefix(utf8Bytes maxBytes: Int) -> Substring {
        var end = startIndex
        var used = 0
        for index in indices {
            let next = self.index(after: index)
            used += utf8.distance(from: index, to: next)
            if used > maxBytes { break }
            end = next
        }
        return self[..<end]
    }
}
