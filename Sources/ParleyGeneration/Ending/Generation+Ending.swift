import Foundation
import ParleyOutcome
import ParleyPrimitives
import ParleyStore

extension Generation {
    /// Stops the upstream call at once and keeps exactly the text received so far.
    func stop() async {
        guard outcome == nil else { return }
        upstream?.cancel()
        await finish(status: .stopped)
    }

    /// Ends the generation as `interrupted` (graceful shutdown). An end already waiting for the store
    /// gives up: a stopping server does not wait for its database.
    func interrupt() async {
        guard outcome == nil else { return }
        if ending {
            endGivenUp = true
            return
        }
        upstream?.cancel()
        await finish(status: .interrupted, errorCode: .serverShutdown,
                     errorMessage: Generations.shutdownMessage)
    }

    /// Ends the reply: the last frame, the final render, the row written once, then `done` to every
    /// subscriber. The row is written before any final event is logged or sent, so an end that waits
    /// for the store (it is down) leaves the reply live as it was: a subscriber arriving meanwhile gets
    /// the live snapshot, never the final events twice, and the reply keeps its slot (and, on several
    /// nodes, its lease, so no other node takes it over).
    func finish(status: MessageStatus, errorCode: ReplyErrorCode? = nil, errorMessage: String? = nil) async {
        guard outcome == nil, !ending else { return }
        ending = true
        emitFrame()
        // Calls no one will finish end here (a paused reply keeps the ones awaiting approval).
        let cancelled = parts.cancelOpenCalls(includingAwaiting: status != .awaitingApproval)
        let final = text.finish()
        // After finish, the Markdown's blocks are the whole render: committed blocks patched, then the final ones.
        let offset = parts.closedBlocks.count
        let blocks = parts.closedBlocks + text.markdown.blocks
        let content = parts.content(text: text.answer)
        let reasoning = parts.reasoning(text.reasoning)
        let patch = final.patch.map { BlockPatch(index: offset + $0.index, html: $0.html) }
        let html = blocks.joined()
        // Only a reply with tool calls stores parts (one of text alone has the parts its text gives).
        let storedParts = parts.hasToolCalls
            ? parts.all(text: text.answer, reasoning: text.reasoning, html: text.markdown.blocks.joined()) : nil
        // The row is written first: its usage, completed by the store (an estimate marked `estimated` when
        // the provider reported none), is what `done` carries, as a late reader's `done` built from the row does.
        // The provider's figures are clamped into `ReplyTokens.range` here, as every stored usage is.
        let reported = usage.map { ReplyTokens(inputTokens: $0.inputTokens, outputTokens: $0.outputTokens) }
        let end = ReplyEnd(content: content, reasoning: reasoning, status: status, finishReason: finishReason,
                           usage: reported, model: model, errorCode: errorCode, errorMessage: errorMessage,
                           html: html, parts: storedParts)
        let storedUsage = await record(end) ?? reported
        // Handed over (a graceful stop on several nodes) while the end waited: another node ends it.
        guard outcome == nil else { return }

        var batch = cancelled.map { event(.toolCall($0)) }
        for block in final.blocks {
            batch.append(event(.block(index: offset + block.index, html: block.html)))
        }
        finalStateID = log.lastID
        if let errorCode {
            let failure = event(.error(code: errorCode, message: errorMessage ?? ""))
            errorEventID = failure.id
            batch.append(failure)
        }
        let result = GenerationOutcome(status: status, finishReason: finishReason, usage: storedUsage,
                                       patch: patch, blockCount: blocks.count,
                                       errorCode: errorCode, errorMessage: errorMessage)
        outcome = result
        wakeups.finish()
        finished = FinishedReply(messageID: messageID, content: content, reasoning: reasoning, blocks: blocks,
                                 parts: parts.snapshot(text: text.answer, reasoning: text.reasoning,
                                                       liveBlocks: text.markdown.blocks.count),
                                 outcome: result)
        batch.append(event(.done(result)))
        // The slot is freed before anyone sees `done`: a client that continues, approves or sends at once
        // must not find the reply still live (409 already_streaming). Subscribers arriving meanwhile get
        // the finished reply (`finished` is set), never this batch too.
        if let onEnd {
            await onEnd(messageID, log.lastID)
            // Cleared once it has run: `finalOutcome` called during it waits instead of answering before
            // the reply left the live set (seen once: a caller found it still live after its outcome).
            self.onEnd = nil
        }
        subscribers.deliver(batch)
        subscribers.removeAll()
        // After `onEnd`: whoever waited for the outcome finds the reply no longer live (its slot free).
        for waiter in outcomeWaiters { waiter.resume(returning: result) }
        outcomeWaiters.removeAll()
    }

    /// Writes the end and returns the stored usage. While the store is unavailable (PostgreSQL down)
    /// the write is tried again, 100 ms apart doubling to 2 s, until it is stored or a shutdown gives
    /// up (the row then stays `streaming`: the next start marks it interrupted, or another node takes
    /// it over). Any other failure is logged and the reply ends without its row, as before.
    private func record(_ end: ReplyEnd) async -> ReplyTokens? {
        var pause = Duration.milliseconds(100)
        var logged = false
        while true {
            do {
                return try recorder.recordEnd(of: messageID, end).usage
            } catch StoreError.notFound {
                // The conversation was deleted during the reply; nothing is left to write to.
                return nil
            } catch StoreError.unavailable(let reason) where !endGivenUp {
                if !logged {
                    logged = true
                    FileHandle.standardError.write(Data("parley: reply \(messageID): its end waits for the store (\(reason))\n".utf8))
                }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(2))
            } catch {
                FileHandle.standardError.write(Data("parley: storing message \(messageID) failed: \(error)\n".utf8))
                return nil
            }
        }
    }
}
