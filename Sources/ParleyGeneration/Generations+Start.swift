import Foundation
import ParleyA2UI
import ParleyMarkdown
import ParleyProviders
import ParleyStore

/// The start path: send, regenerate and continue are `StartPlan`s that take the same four steps.
extension Generations {
    /// The hidden turn used to continue an answer with a provider that cannot take a prefill.
    static let continueInstruction =
        "Continue your previous answer exactly where it stopped. Do not repeat anything you already wrote."

    /// Adds a user message where `placement` says (under the current leaf; under an earlier message or
    /// as a new root to branch, which is how edit works) and starts its answer. `settings` override the
    /// conversation's generation settings for this reply only (an OpenAI-style call's own values), and
    /// `options` go to the provider with it (checked first with `refusal(of:model:)`).
    public func send(conversationID: String, placement: TurnPlacement, content: String, model: String?,
                     owner: String, settings: GenerationSettings? = nil,
                     options: ChatOptions = ChatOptions(),
                     clientTools: [ToolSpec] = [], fileIDs: [String] = [],
                     userParts: [MessagePart]? = nil) async throws -> (user: Message, assistant: Message) {
        let started = try await start(.send(conversationID: conversationID, placement: placement,
                                            content: content, model: model, settings: settings, options: options,
                                            clientTools: clientTools, fileIDs: fileIDs, userParts: userParts),
                                      owner: owner)
        guard let user = started.user else { throw GenerationError.conversationNotFound }
        return (user, started.reply)
    }

    /// Starts a new answer beside the assistant message `messageID` (a sibling under the same user message).
    public func regenerate(messageID: String, model: String?, owner: String) async throws -> Message {
        try await start(.regenerate(messageID: messageID, model: model), owner: owner).reply
    }

    /// Extends a stopped, truncated, failed or interrupted answer; new text is appended to it. An answer
    /// that ends with tool calls and their results goes on from them (the model's next round);
    /// `settings`, `options` and `clientTools` are as for `send`.
    public func continueMessage(messageID: String, owner: String, settings: GenerationSettings? = nil,
                                options: ChatOptions = ChatOptions(),
                                clientTools: [ToolSpec] = []) async throws -> Message {
        try await start(.continueReply(messageID: messageID, settings: settings, options: options,
                                       clientTools: clientTools), owner: owner).reply
    }

    /// The one path every reply starts by. Only the admission (caps, account) and the registration
    /// hold this actor, briefly; the reads, the model's resolution, the user message's Markdown and
    /// the write of send and regenerate run off it, so concurrent starts do not queue one by one
    /// behind each other's SQLite work, nor behind stops, subscriptions and the group commit.
    ///
    /// Steps: 1. prepare (reads, render; off the actor) 2. admit (a reservation counts against the
    /// caps) 3. write the rows and read the branch in one transaction (off the actor; for continue in
    /// step 4's turn) 4. register the generation and open the provider stream.
    public func start(_ plan: StartPlan, owner: String) async throws -> ReplyStart {
        let prepared = try await prepare(plan, owner: owner)
        let continued: String?
        if case .continueReply(let messageID, _, _, _) = plan { continued = messageID } else { continued = nil }
        let reservation = try admit(owner: owner, conversationID: prepared.conversationID, continuing: continued)
        let written: ReplyStart
        do {
            if let continued {
                // Continue's id is known to clients: its row turns `streaming` in the same actor turn that
                // registers its generation, so no stop or subscriber ever sees one without the other
                // (a stop then answered `streaming` and was lost; a subscriber was told `interrupted`).
                written = try Self.writeContinue(prepared, messageID: continued, store: store)
            } else {
                // The new rows' ids are unknown to everyone until this returns, so nobody can look for
                // them between the write and the registration; a stop-all meanwhile cancels the
                // reservation.
                written = try await write(prepared, owner: owner)
            }
        } catch {
            // A refused write (a continue of a message that has replies, a deleted conversation)
            // gives its slot back.
            if let dropped = reservations.removeValue(forKey: reservation), let slot = dropped.slot {
                relay?.moveLive(owner: dropped.owner, from: slot, to: nil)
            }
            throw error
        }
        return try register(reservation, prepared: prepared, owner: owner, written: written)
    }

    /// Step 1: everything a start reads before it writes. Off the actor.
    @concurrent
    private nonisolated func prepare(_ plan: StartPlan, owner: String) async throws -> PreparedStart {
        switch plan {
        case .send(let conversationID, _, _, let model, let settings, let options, let clientTools, _, _):
            guard let conversation = try store.conversation(id: conversationID) else {
                throw GenerationError.conversationNotFound
            }
            let resolved = try await resolve(model ?? conversation.model)
            return PreparedStart(plan: plan, conversationID: conversationID, systemPrompt: conversation.systemPrompt,
                                 settings: conversation.settings.overridden(by: settings), options: options,
                                 model: resolved, message: nil,
                                 toolbox: await toolbox(for: conversation, owner: owner, clientTools: clientTools))
        case .regenerate(let messageID, let model):
            let message = try assistantMessage(messageID)
            guard message.parentID != nil, let conversation = try store.conversation(id: message.conversationID) else {
                throw GenerationError.invalidParent("the message has no user message to answer")
            }
            let resolved = try await resolve(model ?? message.model ?? conversation.model)
            return PreparedStart(plan: plan, conversationID: conversation.id, systemPrompt: conversation.systemPrompt,
                                 settings: conversation.settings, model: resolved, message: message,
                                 toolbox: await toolbox(for: conversation, owner: owner))
        case .continueReply(let messageID, let settings, let options, let clientTools):
            let message = try assistantMessage(messageID)
            guard message.status != .streaming else { throw GenerationError.alreadyStreaming }
            guard message.status != .awaitingApproval || message.toolCalls.allSatisfy({ $0.decision != nil || $0.status.isFinal }) else {
                throw GenerationError.awaitingApproval
            }
            guard message.parentID != nil, let conversation = try store.conversation(id: message.conversationID) else {
                throw GenerationError.invalidParent("the message has no user message to answer")
            }
            let resolved = try await resolve(message.model ?? conversation.model)
            return PreparedStart(plan: plan, conversationID: conversation.id, systemPrompt: conversation.systemPrompt,
                                 settings: conversation.settings.overridden(by: settings), options: options,
                                 model: resolved, message: message,
                                 toolbox: await toolbox(for: conversation, owner: owner, clientTools: clientTools))
        }
    }

    /// Step 2: the caps and the account, in one actor turn; the reservation holds the slot.
    func admit(owner: String, conversationID: String, continuing messageID: String?) throws -> Int {
        guard !shuttingDown else { throw GenerationError.shuttingDown }
        if let messageID, live[messageID] != nil { throw GenerationError.alreadyStreaming }
        // An account disabled before this read is refused here; one disabled after it finds the reply
        // reserved or live, and `stopAll(owner:)` stops it. (Local mode's owner has no row.)
        if let account = try store.user(id: owner), account.disabled { throw GenerationError.ownerDisabled }
        guard live.count + reservations.count < limits.maxConcurrent else {
            throw GenerationError.tooManyGenerations(limit: limits.maxConcurrent)
        }
        let mine = live.values.reduce(0) { $0 + ($1.owner == owner ? 1 : 0) }
            + reservations.values.reduce(0) { $0 + ($1.owner == owner ? 1 : 0) }
        guard mine < limits.maxConcurrentPerUser else {
            throw GenerationError.tooManyGenerationsForUser(limit: limits.maxConcurrentPerUser)
        }
        var slot: String?
        if let relay {
            let key = "start-" + UUID().uuidString
            guard try relay.admitLive(owner: owner, key: key, limit: limits.maxConcurrentPerUser) else {
                throw GenerationError.tooManyGenerationsForUser(limit: limits.maxConcurrentPerUser)
            }
            slot = key
        }
        let token = nextReservation
        nextReservation += 1
        reservations[token] = Reservation(owner: owner, conversationID: conversationID, slot: slot)
        return token
    }

    /// Step 3 off the actor (send, regenerate): the rows and the branch the model answers, in a
    /// transaction shared with the starts arriving beside it (`Store.beginTurnInSharedCommit`); it
    /// returns once that transaction has committed.
    @concurrent
    private nonisolated func write(_ prepared: PreparedStart, owner: String) async throws -> ReplyStart {
        do throws(StoreError) {
            switch prepared.plan {
            case .send(let conversationID, let placement, let content, _, _, _, _, let fileIDs, let userParts):
                return listed(try await store.beginTurnInSharedCommit(
                    conversationID: conversationID, placement: placement, userContent: content,
                    model: prepared.model.id, fileIDs: fileIDs, userParts: userParts), owner: owner)
            case .regenerate(let messageID, _):
                return listed(try await store.beginSiblingInSharedCommit(ofAssistant: messageID, model: prepared.model.id),
                              owner: owner)
            case .continueReply(let messageID, _, _, _):
                return try store.beginContinue(id: messageID)
            }
        } catch {
            throw Self.startFailure(error, prepared)
        }
    }

    private func isContinue(_ plan: StartPlan) -> Bool {
        if case .continueReply = plan { true } else { false }
    }

    /// A new `streaming` row is listed live at once, before this actor registers its generation (with
    /// several nodes its lease is renewed from the list: a storm of starts that keeps the actor busy for
    /// seconds must not let another node judge the reply's node dead).
    private nonisolated func listed(_ written: ReplyStart, owner: String) -> ReplyStart {
        if relay != nil { liveSet.add(written.reply.id, owner: owner, registered: false) }
        return written
    }

    /// Step 3 for continue, in the actor's turn: the row and the branch, in one write transaction.
    private static func writeContinue(_ prepared: PreparedStart, messageID: String, store: Store) throws -> ReplyStart {
        do throws(StoreError) {
            return try store.beginContinue(id: messageID)
        } catch {
            throw startFailure(error, prepared)
        }
    }

    /// What a start answers when the store refused its write.
    private static func startFailure(_ error: StoreError, _ prepared: PreparedStart) -> any Error {
        // (A pattern `catch StoreError.notFound` crashes the 6.3 compiler on typed throws.)
        guard case .notFound(let missing) = error else { return error }
        if missing.isConversation { return GenerationError.conversationNotFound }
        // A file of the turn that is not the caller's (or no longer live): the store's 404 names it.
        if case .file = missing { return error }
        if case .send = prepared.plan {
            return GenerationError.invalidParent(
                "'parent_id' must name an assistant message of this conversation, or be null for a new root.")
        }
        return GenerationError.messageNotFound
    }

    /// Step 4: registers the live generation and opens the provider stream, in one actor turn. A
    /// reservation cancelled meanwhile (the conversation deleted, the account disabled, shutdown)
    /// ends the new row at once instead.
    func register(_ token: Int, prepared: PreparedStart, owner: String,
                          written: ReplyStart) throws -> ReplyStart {
        var running = false
        // Listed live since its write (`write`): it leaves the list unless it runs.
        defer { if !running { liveSet.remove(written.reply.id) } }
        guard let reservation = reservations.removeValue(forKey: token) else { return written }
        // The cluster's slot becomes the reply's, or is freed when the reply does not run after all.
        let slot = reservation.slot
        defer {
            if let slot { relay?.moveLive(owner: reservation.owner, from: slot, to: running ? written.reply.id : nil) }
        }
        if let ending = reservation.cancelled {
            let shutdown = ending == .interrupted
            let ended = try? store.finishMessage(
                id: written.reply.id, content: written.reply.content, status: ending,
                errorCode: shutdown ? .serverShutdown : nil, errorMessage: shutdown ? Self.shutdownMessage : nil,
                html: renderer.render(written.reply.content))
            return ReplyStart(user: written.user, reply: ended ?? written.reply, context: written.context)
        }
        let reply = written.reply
        if relay != nil, !isContinue(prepared.plan), !liveSet.contains(reply.id) {
            // Listed at its write and dropped since: another node won its lease meanwhile (fencing); it runs there.
            return written
        }
        var messages: [ChatMessage]
        do {
            messages = try context.messages(systemPrompt: prepared.systemPrompt, branch: written.context)
        } catch {
            // The reply row exists: it ends failed at once rather than stay `streaming` with no generation.
            let ended = try? store.finishMessage(
                id: reply.id, content: reply.content, status: .failed, errorCode: .attachmentsUnreadable,
                errorMessage: "The conversation's files could not be read: \(error)", html: renderer.render(reply.content))
            return ReplyStart(user: written.user, reply: ended ?? reply, context: written.context)
        }
        var prefill: String?
        var previousID: Int64 = 0
        if case .continueReply = prepared.plan {
            if !reply.toolCalls.isEmpty {
                // A reply with tool calls is continued from its parts: the generation sends its rounds.
            } else if prepared.model.provider.supportsPrefill {
                prefill = reply.content
            } else {
                messages.append(ChatMessage(role: .assistant, content: reply.content))
                messages.append(ChatMessage(role: .user, content: Self.continueInstruction))
            }
            // Ids continue above the previous run's: its last id when still in memory (clients that saw it are
            // then replayed this run exactly; a decision on a paused reply writes the row, so the row's newer
            // time must not replace it), else above the last time the message was written (a wall clock
            // stepped back cannot reuse ids).
            previousID = retained.lastEventID(for: reply.id)
                ?? EventIDClock.ceiling(writtenAt: prepared.message?.updatedAt ?? reply.updatedAt)
            // With several nodes the previous run may have been another node's, on its clock: the stream's
            // newest id is the floor (a continue never issues an id a tab on any node already holds).
            if let relay, let newest = relay.lastEventID(messageID: reply.id) { previousID = max(previousID, newest) }
            retained.remove(reply.id)
        }
        let request = ChatRequest(model: prepared.model.upstream, messages: messages, prefill: prefill,
                                  settings: prepared.settings, options: prepared.options,
                                  tools: prepared.toolbox.tools.map(\.spec))
        let provider = prepared.model.provider
        let generation = Generation(message: reply, owner: owner, model: prepared.model.id, recorder: store,
                                    limits: limits, renderer: renderer, ticker: ticker,
                                    after: previousID, toolbox: prepared.toolbox, runner: tools,
                                    surfaceBoard: surfaceBoard(prepared.toolbox, branch: written.context, reply: reply,
                                                               owner: owner),
                                    relay: relay) { [weak self] id, lastID in
            await self?.ended(id, lastEventID: lastID)
        }
        addLive(generation)
        running = true
        Task {
            await generation.run { turns in
                var round = request
                round.messages += turns
                return provider.events(round)
            }
        }
        return written
    }

    // MARK: - Reads

    /// The surfaces a reply that may call `parley/render_ui` starts from: the fold of the branch before it
    /// and of its own parts (a continued reply), with images allowed only from the owner's live files.
    private nonisolated func surfaceBoard(_ toolbox: Toolbox, branch: [Message], reply: Message,
                                          owner: String) -> SurfaceBoard? {
        guard toolbox.runner == .server, toolbox.tools.contains(where: { $0.id == RenderUITool.id }) else { return nil }
        let store = store
        let history = branch.filter { $0.id != reply.id }.flatMap(\.surfaceMessages) + reply.surfaceMessages
        return SurfaceBoard(limits: limits.surfaces, images: ImagePolicy { id in
            (try? store.liveFiles(ids: [id], ownedBy: owner)) != nil
        }, history: history)
    }

    /// The first part of a call that the provider of `modelID` cannot honour (its OpenAI parameter name),
    /// or nil: `tools` offered to a provider that calls none, then `options`, then `messages` when the
    /// history holds tool calls or results (`toolTurns`) it cannot read. An unknown model refuses
    /// nothing here (`send` reports it).
    public nonisolated func refusal(of options: ChatOptions, tools: [ToolSpec] = [], toolTurns: Bool = false,
                                    model modelID: String) -> String? {
        guard let provider = providers.resolve(modelID)?.provider else { return nil }
        if let refused = provider.refusal(ChatRequest(model: modelID, messages: [], options: options, tools: tools)) {
            return refused
        }
        return toolTurns && !provider.supportsTools ? "messages" : nil
    }

    nonisolated func assistantMessage(_ id: String) throws -> Message {
        guard let message = try store.message(id: id) else { throw GenerationError.messageNotFound }
        guard message.role == .assistant else { throw GenerationError.notAnAssistantMessage }
        return message
    }

    /// An API client's own tools when it gave some (relayed, never run: `runner: .client`), else the
    /// tools the conversation enables that the owner may use now (none without a runner).
    private nonisolated func toolbox(for conversation: Conversation, owner: String,
                                     clientTools: [ToolSpec] = []) async -> Toolbox {
        if !clientTools.isEmpty {
            return Toolbox(tools: clientTools.map { Toolbox.Tool(id: $0.name, spec: $0, needsApproval: false) },
                           runner: .client)
        }
        guard let tools, !conversation.tools.isEmpty else { return .none }
        return await tools.toolbox(enabled: conversation.tools, owner: owner)
    }

    private nonisolated func resolve(_ requested: String?) async throws -> ResolvedModel {
        var id = requested ?? ""
        if id.isEmpty { id = await providers.defaultModelID() }
        guard let resolved = providers.resolve(id) else { throw GenerationError.unknownModel(id) }
        return ResolvedModel(id: id, provider: resolved.provider, upstream: resolved.model)
    }
}

/// A start admitted but not registered yet; `cancelled` is the status its row ends with instead.
struct Reservation {
    let owner: String
    let conversationID: String
    var cancelled: MessageStatus?
    /// With several nodes: its slot in the cluster's count of the owner's live replies.
    var slot: String?
}

/// A model id as Parley names it, the provider serving it and the provider's own name for it.
struct ResolvedModel: Sendable {
    let id: String
    let provider: any ChatProvider
    let upstream: String
}

/// What a start read before writing: the plan, the conversation's system prompt and settings, the model, and
/// (regenerate, continue) the message it starts from.
struct PreparedStart: Sendable {
    let plan: StartPlan
    let conversationID: String
    let systemPrompt: String?
    /// The conversation's generation settings, with a send's own values over them.
    let settings: GenerationSettings
    /// A send's (or an API continue's) own provider options (none for regenerate and the page's continue).
    var options = ChatOptions()
    let model: ResolvedModel
    let message: Message?
    /// The tools offered to the model.
    var toolbox = Toolbox.none
}
