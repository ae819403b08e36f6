import ParleyOutcome
import ParleyPrimitives
import ParleyProviders
import ParleyStore

/// The turn loop: the model streams text and tool calls; when it ends a round with calls, they are
/// checked, asked about or run (concurrently, results kept in call order), and the model answers again
/// with the results, until it answers without calls, reaches a limit, or the reply pauses for approval.
extension Generation {
    /// How one model answer (a round) ended.
    enum RoundEnd {
        /// The answer is complete and called no tool.
        case answered
        /// The answer ended with tool calls to handle.
        case toolCalls
        /// The reply must end with this status and error.
        case failed(MessageStatus, ReplyErrorCode, String)
        /// Something else ended the reply meanwhile (stop, shutdown) or the reply was cut for length.
        case ended
    }

    /// Opens the provider stream and starts the loop, unless the generation was already stopped: the
    /// upstream call is only made once nothing can end the generation without cancelling it. `open`
    /// is given this reply's own turns so far (earlier rounds' calls and results).
    func run(_ open: @escaping @Sendable ([ChatMessage]) -> ProviderEventBatches) {
        guard outcome == nil, upstream == nil else { return }
        upstream = Task { await self.loop(open) }
    }

    private func loop(_ open: @escaping @Sendable ([ChatMessage]) -> ProviderEventBatches) async {
        // A reply resumed after approval runs the round's approved calls first.
        let pending = parts.pendingCalls
        if !pending.isEmpty {
            guard await runCalls(pending) else { return }
        }
        while outcome == nil {
            switch await consume(open(ownTurns())) {
            case .answered:
                await finish(status: .complete)
                return
            case .failed(let status, let code, let message):
                await finish(status: status, errorCode: code, errorMessage: message)
                return
            case .ended:
                if outcome == nil { await finish(status: .complete) }
                return
            case .toolCalls:
                guard await closeRound() else { return }
            }
        }
    }

    /// This reply's own turns for the next model call: its closed rounds (text, calls, results). A reply
    /// continued after text with no call after it asks the model to go on from there.
    private func ownTurns() -> [ChatMessage] {
        guard parts.hasToolCalls else { return [] }
        var turns = ToolTurns.messages(from: parts.all(text: text.answer, reasoning: "", html: nil),
                                       messageID: messageID)
        if let last = turns.last, last.role == .assistant, last.toolCalls.isEmpty {
            turns.append(ChatMessage(role: .user, content: Generations.continueInstruction))
        }
        return turns
    }

    /// Reads the model's answer on this actor: each upstream read arrives here straight from the
    /// upstream thread, decoded and parsed in this isolation, and its events are handled in order.
    private func consume(_ events: ProviderEventBatches) async -> RoundEnd {
        finishReason = nil
        do {
            var batches = events.makeAsyncIterator()
            while let batch = try await batches.next(isolation: self) {
                for event in batch {
                    guard outcome == nil else { return .ended }
                    guard handle(event) else { return .ended }
                }
            }
            guard outcome == nil else { return .ended }
            // Cancelled by something other than stop or shutdown (which set the outcome first).
            if Task.isCancelled { return .failed(.failed, .cancelled, "The reply was cancelled.") }
            return parts.roundCalls.isEmpty || toolbox.isEmpty ? .answered : .toolCalls
        } catch let error as ProviderError {
            guard outcome == nil else { return .ended }
            let status: MessageStatus = error.code == .upstreamInterrupted ? .interrupted : .failed
            return .failed(status, error.code, error.message)
        } catch {
            guard outcome == nil else { return .ended }
            return .failed(.failed, .upstreamError, "The model's stream failed.")
        }
    }

    /// Returns false when the reply must end here (it reached `maxReplyBytes`: `length`).
    private func handle(_ event: ProviderEvent) -> Bool {
        switch event {
        case .text(let text):
            return receive(text)
        case .finish(let reason):
            finishReason = reason
        case .usage(let reported):
            usage = Usage(inputTokens: Self.sum(usage?.inputTokens, reported.inputTokens),
                          outputTokens: Self.sum(usage?.outputTokens, reported.outputTokens))
        case .reasoning(let text):
            return receive(text, as: .reasoning)
        case .logprobs(let items):
            receiveLogprobs(items)
        case .toolCall(let delta):
            // With no tools offered, a call is only its finish reason (nothing to run or show).
            guard !toolbox.isEmpty else { return true }
            return receiveToolCall(delta)
        }
        return true
    }

    private static func sum(_ earlier: Int?, _ more: Int?) -> Int? {
        guard let earlier else { return more }
        guard let more else { return earlier }
        return earlier.addingReportingOverflow(more).overflow ? Int.max : earlier + more
    }

    /// A fragment of a tool call: the first of a call closes the text before it (sent as final blocks) and
    /// announces the call; arguments are relayed as they come. They spend the run's byte budget.
    private func receiveToolCall(_ delta: ToolCallDelta) -> Bool {
        var batch: [GenerationEvent] = []
        if !parts.hasCall(index: delta.index) {
            emitFrame()
            batch += closeTextPart()
            let name = delta.name ?? ""
            let call = parts.beginCall(index: delta.index, providerID: delta.id ?? "", name: name,
                                       tool: toolbox.tool(named: name)?.id ?? "")
            batch.append(event(.toolCall(call)))
        }
        guard text.spend(delta.argumentsDelta.utf8.count) else {
            subscribers.deliver(batch)
            finishReason = .length
            return false
        }
        if !delta.argumentsDelta.isEmpty, let id = parts.appendArguments(index: delta.index, delta.argumentsDelta) {
            batch.append(event(.toolCallDelta(id: id, argumentsDelta: delta.argumentsDelta)))
            batch += surfaceEvents(callIndex: delta.index, fragment: delta.argumentsDelta)
        }
        subscribers.deliver(batch)
        return true
    }

    /// Closes the streaming text part: its last blocks and any patched ones as `block` events, and an
    /// empty tail (the next text part starts after the tool call).
    private func closeTextPart() -> [GenerationEvent] {
        let offset = parts.closedBlocks.count
        let closing = text.closePart()
        parts.closeSegment(text: closing.text, reasoning: closing.reasoning, blocks: closing.blocks)
        guard !closing.text.isEmpty else { return [] }
        var batch: [GenerationEvent] = []
        for block in closing.final.patch {
            batch.append(event(.block(index: offset + block.index, html: block.html)))
        }
        for block in closing.final.blocks {
            batch.append(event(.block(index: offset + block.index, html: block.html)))
        }
        batch.append(event(.tail("")))
        batch.append(provisionalEvent(nil))
        return batch
    }

    /// The model ended a round with calls: each is checked (arguments a JSON object, a tool it may call);
    /// then they run, or the reply pauses for approval, or ends (client tools, the round limit).
    /// Returns true when the loop goes on with another model answer.
    private func closeRound() async -> Bool {
        var batch: [GenerationEvent] = []
        var runnable: [ToolCallPart] = []
        for var call in parts.roundCalls where call.status == .streaming {
            // render_ui's calls are done when their arguments are: what they drew is their result.
            if drawSurfaces(&call, into: &batch) { continue }
            let parsed = JSON(parsing: call.argumentsText.isEmpty ? "{}" : call.argumentsText)
            if case .object? = parsed {
                call.arguments = parsed
            } else {
                call.status = .error
                call.result = .text("The arguments are not a JSON object: \(String(call.argumentsText.prefix(200)))",
                                    isError: true)
            }
            if call.status != .error, toolbox.runner == .server, toolbox.tool(named: call.name) == nil {
                call.status = .error
                call.result = .text("There is no tool named '\(call.name)'.", isError: true)
            }
            if call.status == .error {
                update([call], into: &batch) { _ in }
            } else {
                runnable.append(call)
            }
        }
        if toolbox.runner == .client {
            // The API client runs them: the calls are complete as far as Parley goes, the reply ends here.
            update(runnable, into: &batch) { $0.status = .complete }
            return await endRound(batch, reason: .toolCalls, status: .complete)
        }
        if parts.round >= limits.maxToolRounds {
            let limit = limits.maxToolRounds
            update(runnable, into: &batch) {
                $0.status = .error
                $0.result = .text("Parley's limit of \(limit) tool rounds was reached.", isError: true)
            }
            return await endRound(batch, reason: .toolRounds, status: .complete)
        }
        if runnable.contains(where: { toolbox.tool(named: $0.name)?.needsApproval ?? true }) {
            let toolbox = toolbox
            update(runnable, into: &batch) { call in
                call.status = .awaitingApproval
                // A call that needs no approval is decided already: it runs when the round resumes.
                if toolbox.tool(named: call.name)?.needsApproval == false { call.decision = .approve }
            }
            return await endRound(batch, reason: .toolCalls, status: .awaitingApproval)
        }
        subscribers.deliver(batch)
        return await runCalls(runnable)
    }

    /// Changes each call as `change` says, records it, and adds its event: `tool_result` once it has a
    /// result, `tool_call` otherwise.
    private func update(_ calls: [ToolCallPart], into batch: inout [GenerationEvent],
                        _ change: (inout ToolCallPart) -> Void) {
        for var call in calls {
            change(&call)
            parts.update(call)
            batch.append(event(call.result == nil ? .toolCall(call) : .toolResult(call)))
        }
    }

    /// The reply ends after this round's calls were settled (`batch`): sent, then the final state.
    /// Returns false (the loop stops).
    private func endRound(_ batch: [GenerationEvent], reason: FinishReason, status: MessageStatus) async -> Bool {
        subscribers.deliver(batch)
        finishReason = reason
        await finish(status: status)
        return false
    }

    /// Runs the calls concurrently (each `running`, then its result as it comes), then ends the round.
    /// Returns false when the reply ended meanwhile (a stop cancels the calls: the runner tells their
    /// servers, and their parts are `cancelled`).
    func runCalls(_ calls: [ToolCallPart]) async -> Bool {
        guard let runner else {
            for var call in calls {
                call.status = .error
                call.result = .text("No tool runner is configured.", isError: true)
                parts.update(call)
                subscribers.deliver([event(.toolResult(call))])
            }
            parts.endRound()
            return outcome == nil
        }
        var started: [GenerationEvent] = []
        var running: [ToolCallPart] = []
        for var call in calls {
            call.status = .running
            parts.update(call)
            running.append(call)
            started.append(event(.toolCall(call)))
        }
        subscribers.deliver(started)
        let owner = self.owner
        let cap = ToolResultLimit(maxBytes: limits.maxToolResultBytes)
        await withTaskGroup(of: (ToolCallPart, ToolCallResult).self) { group in
            for call in running {
                let arguments = call.arguments ?? .object([:])
                group.addTask { (call, cap.cut(await runner.run(tool: call.tool, arguments: arguments, owner: owner))) }
            }
            for await (call, result) in group {
                guard outcome == nil else { continue }
                var done = call
                done.result = result
                done.status = result.isError ? .error : .complete
                parts.update(done)
                subscribers.deliver([event(.toolResult(done))])
            }
        }
        guard outcome == nil else { return false }
        parts.endRound()
        return true
    }
}
