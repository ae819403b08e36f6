import Foundation
import ParleyMarkdown
import ParleyProviders
import ParleyStore

/// Every live generation, and the operations that start or end one (send, regenerate, continue,
/// stop). It enforces the concurrency caps, builds the upstream context, and writes all live
/// generations' text to SQLite in one transaction per flush interval (group commit), so a `kill -9`
/// loses at most one interval of text.
///
/// Concurrency: an actor. Store calls are short synchronous SQLite transactions made from it.
public actor Generations {
    private let store: Store
    private let providers: ProviderRegistry
    private let limits: GenerationLimits
    private let renderer: MarkdownRenderer
    private let context: ContextBuilder
    /// Live generations by message id.
    private var live: [String: Generation] = [:]
    /// Recently finished generations kept for exact replay, by message id.
    private var retained: [String: Generation] = [:]
    private var flusher: Task<Void, Never>?
    /// Set by `shutdown`: no reply starts after it.
    private var shuttingDown = false

    /// The hidden turn used to continue an answer with a provider that cannot take a prefill.
    static let continueInstruction =
        "Continue your previous answer exactly where it stopped. Do not repeat anything you already wrote."

    public init(store: Store, providers: ProviderRegistry, limits: GenerationLimits,
                renderer: MarkdownRenderer = MarkdownRenderer()) {
        self.store = store
        self.providers = providers
        self.limits = limits
        self.renderer = renderer
        self.context = ContextBuilder(budget: limits.contextBudgetCharacters)
    }

    // MARK: - Starting

    /// Adds a user message where `placement` says (under the current leaf; under an earlier message or
    /// as a new root to branch, which is how edit works) and starts its answer. `settings` override the
    /// conversation's generation settings for this reply only (an OpenAI-style call's own values).
    public func send(conversationID: String, placement: TurnPlacement, content: String, model: String?,
                     owner: String,
                     settings: GenerationSettings? = nil) async throws -> (user: Message, assistant: Message) {
        guard let conversation = try store.conversation(id: conversationID) else {
            throw GenerationError.conversationNotFound
        }
        let (modelID, provider, upstreamModel) = try await resolve(model ?? conversation.model)
        // Checked after the last suspension: from here to `start` nothing else runs on this actor.
        try checkCapacity(owner: owner)
        let turn: (user: Message, assistant: Message)
        do {
            turn = try store.appendTurn(conversationID: conversationID, placement: placement,
                                        userContent: content, userHTML: renderer.render(content), model: modelID)
        } catch {
            // (A pattern `catch StoreError.notFound` crashes the 6.3 compiler on typed throws.)
            if case .notFound = error {
                throw GenerationError.invalidParent(
                    "'parent_id' must name an assistant message of this conversation, or be null for a new root.")
            }
            throw error
        }
        let history = try store.contextPath(leafID: turn.user.id)
        let request = ChatRequest(model: upstreamModel,
                                  messages: context.messages(systemPrompt: conversation.systemPrompt,
                                                             branch: history),
                                  settings: conversation.settings.overridden(by: settings))
        await start(turn.assistant, owner: owner, model: modelID, provider: provider, request: request)
        return turn
    }

    /// Starts a new answer beside the assistant message `messageID` (a sibling under the same user message).
    public func regenerate(messageID: String, model: String?, owner: String) async throws -> Message {
        let message = try assistantMessage(messageID)
        guard let parentID = message.parentID,
              let conversation = try store.conversation(id: message.conversationID) else {
            throw GenerationError.invalidParent("the message has no user message to answer")
        }
        let (modelID, provider, upstreamModel) = try await resolve(model ?? message.model ?? conversation.model)
        try checkCapacity(owner: owner)
        let sibling = try store.createSibling(ofAssistant: messageID, model: modelID)
        let history = try store.contextPath(leafID: parentID)
        let request = ChatRequest(model: upstreamModel,
                                  messages: context.messages(systemPrompt: conversation.systemPrompt,
                                                             branch: history),
                                  settings: conversation.settings)
        await start(sibling, owner: owner, model: modelID, provider: provider, request: request)
        return sibling
    }

    /// Extends a stopped, truncated, failed or interrupted answer; new text is appended to it.
    public func continueMessage(messageID: String, owner: String) async throws -> Message {
        let message = try assistantMessage(messageID)
        guard message.status != .streaming, live[messageID] == nil else {
            throw GenerationError.alreadyStreaming
        }
        guard let parentID = message.parentID,
              let conversation = try store.conversation(id: message.conversationID) else {
            throw GenerationError.invalidParent("the message has no user message to answer")
        }
        let (modelID, provider, upstreamModel) = try await resolve(message.model ?? conversation.model)
        // The previous run's last id while it is still in memory. Asked before the row changes:
        // asking another actor suspends, and nothing may suspend between the row turning `streaming`
        // and the live generation being registered.
        let previousRunID = await retained[messageID]?.lastEventID ?? 0
        // From here to `start` registering the generation, nothing suspends: no stop or subscriber can
        // run on this actor in between, so none sees a `streaming` row without its live generation
        // (a stop then answered `streaming` and was lost; a subscriber was told `interrupted`).
        guard live[messageID] == nil else { throw GenerationError.alreadyStreaming }
        try checkCapacity(owner: owner)
        let resumed = try store.resumeStreaming(id: messageID)
        let history = try store.contextPath(leafID: parentID)
        var messages = context.messages(systemPrompt: conversation.systemPrompt, branch: history)
        var prefill: String?
        if provider.supportsPrefill {
            prefill = resumed.content
        } else {
            messages.append(ChatMessage(role: .assistant, content: resumed.content))
            messages.append(ChatMessage(role: .user, content: Self.continueInstruction))
        }
        let request = ChatRequest(model: upstreamModel, messages: messages, prefill: prefill,
                                  settings: conversation.settings)
        // Ids continue above the previous run's: its last id when still in memory, and in any case
        // above the last time the message was written (a wall clock stepped back cannot reuse ids).
        let previousID = max(previousRunID, EventIDClock.ceiling(writtenAt: message.updatedAt))
        retained[messageID] = nil
        await start(resumed, owner: owner, model: modelID, provider: provider, request: request, after: previousID)
        return resumed
    }

    /// Registers the live generation, then opens the provider stream. The registration comes before
    /// the first suspension, so a caller that has just made the row `streaming` (send, regenerate,
    /// continue) does both in one turn of this actor.
    private func start(_ message: Message, owner: String, model: String, provider: any ChatProvider,
                       request: ChatRequest, after previousID: Int64 = 0) async {
        let generation = Generation(message: message, owner: owner, model: model, store: store,
                                    limits: limits, renderer: renderer, after: previousID) { [weak self] id in
            await self?.ended(id)
        }
        live[message.id] = generation
        startFlushing()
        await generation.run { provider.stream(request) }
    }

    private func ended(_ messageID: String) {
        guard let generation = live.removeValue(forKey: messageID) else { return }
        retained[messageID] = generation
        let keep = limits.retainFinished
        Task {
            try? await Task.sleep(for: keep)
            self.release(messageID, generation)
        }
    }

    private func release(_ messageID: String, _ generation: Generation) {
        if retained[messageID] === generation {
            retained[messageID] = nil
        }
    }

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
        // A `streaming` row with no live generation has nothing left that could finish it (its final
        // write failed): stop ends it here with its stored text, so a stop answer never says `streaming`.
        return try store.finishMessage(id: messageID, content: message.content, status: .stopped,
                                       html: renderer.render(message.content))
    }

    /// Stops every live reply of a conversation (it is being deleted).
    public func stopAll(conversationID: String) async {
        for generation in live.values where generation.conversationID == conversationID {
            await generation.stop()
        }
    }

    /// Stops every live reply of one user (their account was just disabled); returns how many. Call it
    /// after the account is marked disabled: a reply that starts later is refused (`ownerDisabled`).
    @discardableResult
    public func stopAll(owner: String) async -> Int {
        let theirs = live.values.filter { $0.owner == owner }
        for generation in theirs {
            await generation.stop()
        }
        return theirs.count
    }

    /// Ends every live generation as `interrupted` and writes it (graceful shutdown); no reply starts after.
    public func shutdown() async {
        shuttingDown = true
        flusher?.cancel()
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
        if let generation = live[messageID] ?? retained[messageID] {
            guard let token = await generation.subscribe(after: lastEventID, deliver: deliver) else { return nil }
            return Subscription(generation: generation, token: token)
        }
        // Read in the same actor turn as the look-up above: a continue changes the row and registers
        // its generation in one turn, so this is the row before the continue or after it, never the
        // `streaming` row of a generation not yet registered (once read as `interrupted`).
        guard let message = try store.message(id: messageID) else { throw GenerationError.messageNotFound }
        _ = deliver(await finishedEvents(message))
        return nil
    }

    /// Snapshot and `done` for a message no generation holds (finished, or from before a restart).
    /// Nonisolated, so rendering a long finished reply never holds up the actor (sends, stops and
    /// other subscriptions go on meanwhile).
    private nonisolated func finishedEvents(_ message: Message) async -> [GenerationEvent] {
        var ids = EventIDClock(after: EventIDClock.ceiling(writtenAt: message.updatedAt))
        let reply = FinishedReply(stored: message, blocks: renderer.renderBlocks(message.content))
        return reply.events(snapshotID: ids.next(), errorID: ids.next(), doneID: ids.next())
    }

    // MARK: - Persistence (group commit)

    private func startFlushing() {
        guard flusher == nil else { return }
        let interval = limits.flushInterval
        flusher = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                await self.flush()
            }
        }
    }

    /// Writes the text of every live generation that grew, in one transaction.
    public func flush() async {
        var updates: [MessageProgress] = []
        var written: [(Generation, Int)] = []
        for generation in live.values {
            if let progress = await generation.progress() {
                updates.append(progress.state)
                written.append((generation, progress.bytes))
            }
        }
        guard !updates.isEmpty else { return }
        do {
            try store.saveProgress(updates)
        } catch {
            // Not confirmed: the next flush writes the same text again.
            FileHandle.standardError.write(Data("parley: progress flush failed: \(error)\n".utf8))
            return
        }
        for (generation, bytes) in written {
            await generation.confirmProgress(bytes)
        }
    }

    // MARK: - Helpers

    /// Number of live generations.
    public var liveCount: Int { live.count }

    private func checkCapacity(owner: String) throws {
        guard !shuttingDown else { throw GenerationError.shuttingDown }
        // In the same actor turn that registers the reply: an account disabled before this read is
        // refused here; one disabled after it finds the reply live, and `stopAll(owner:)` stops it.
        // (Local mode's owner has no row.)
        if let account = try store.user(id: owner), account.disabled { throw GenerationError.ownerDisabled }
        guard live.count < limits.maxConcurrent else {
            throw GenerationError.tooManyGenerations(limit: limits.maxConcurrent)
        }
        let mine = live.values.reduce(0) { $0 + ($1.owner == owner ? 1 : 0) }
        guard mine < limits.maxConcurrentPerUser else {
            throw GenerationError.tooManyGenerationsForUser(limit: limits.maxConcurrentPerUser)
        }
    }

    private func assistantMessage(_ id: String) throws -> Message {
        guard let message = try store.message(id: id) else { throw GenerationError.messageNotFound }
        guard message.role == .assistant else { throw GenerationError.notAnAssistantMessage }
        return message
    }

    private func resolve(_ requested: String?) async throws -> (id: String, provider: any ChatProvider, model: String) {
        var id = requested ?? ""
        if id.isEmpty { id = await providers.defaultModelID() }
        guard let resolved = providers.resolve(id) else { throw GenerationError.unknownModel(id) }
        return (id, resolved.provider, resolved.model)
    }
}

/// A subscriber's attachment to a generation; `cancel` detaches it (the client went away).
public struct Subscription: Sendable {
    let generation: Generation
    let token: Int

    public func cancel() async {
        await generation.unsubscribe(token)
    }
}
