import Foundation
import ParleyOutcome
import ParleyStore

/// Several nodes (issue 24): what a node does for replies another node ran and died with. The lease
/// keeper (ParleyCluster) decides when; this says what: the row ends as its subscribers last saw it,
/// then the reply is continued here, or, when not, its subscribers are told it ended.
extension Generations {
    /// Another node holds the lease of replies this node runs: this node was too slow to renew it and
    /// that node took them over. Each is abandoned here at once (its upstream call ends, nothing more is
    /// published or written), so one reply never has two writers for longer than a renewal period.
    public func leasesLost(_ messageIDs: [String]) async {
        for messageID in messageIDs {
            // A start not registered yet is only listed: dropped from the list, it will not run here.
            liveSet.remove(messageID)
            await live.removeValue(forKey: messageID)?.abandon()
        }
    }

    /// Takes over `reply` (still `streaming`, its node gone, its lease won by this node). Its row ends
    /// `interrupted` with `seen` (the text and reasoning its subscribers were sent, exactly; the stored
    /// progress when unknown or when it has tool calls), open tool calls `cancelled`. With `continuing`
    /// it is then continued here as `continue` would (same message, ids above the last, the model told
    /// of cancelled calls); otherwise, or when the continue is refused, it stays `interrupted`
    /// (`node_lost`) and its subscribers get its final state and `done`. Returns whether it was continued.
    @discardableResult
    public func takeOver(_ reply: StreamingReply, seen: (content: String, reasoning: String)?,
                         continuing: Bool) async -> Bool {
        guard live[reply.messageID] == nil, let message = try? store.message(id: reply.messageID),
              message.status == .streaming else { return false }
        let withCalls = !message.toolCalls.isEmpty
        let content = withCalls ? message.content : seen?.content ?? message.content
        let reasoning = withCalls ? message.reasoning : seen?.reasoning ?? message.reasoning
        let parts = withCalls ? message.parts.map(Self.cancellingOpenCall) : nil
        let lost = "The node running the reply stopped; " + (continuing ? "another continued it." : "it was not continued.")
        guard let ended = try? store.finishMessage(
            id: message.id, content: content, reasoning: reasoning, status: .interrupted,
            errorCode: continuing ? nil : .nodeLost, errorMessage: continuing ? nil : lost,
            html: renderer.render(content), parts: parts) else { return false }
        // The dead node's slot in the owner's count of live replies is this reply's: freed for its continuation.
        relay?.moveLive(owner: reply.ownerID, from: message.id, to: nil)
        if continuing, (try? await continueMessage(messageID: message.id, owner: reply.ownerID)) != nil {
            return true
        }
        // Not continued: every tab following it (on any node) gets its final state and `done`.
        let final = (try? store.message(id: message.id)) ?? ended
        if let relay {
            var ids = EventIDClock(after: max(relay.lastEventID(messageID: message.id) ?? 0,
                                              EventIDClock.ceiling(writtenAt: final.updatedAt)))
            let events = FinishedReply(stored: final, renderer: renderer)
                .events(snapshotID: ids.next(), errorID: ids.next(), doneID: ids.next())
            relay.publish(messageID: message.id, events)
        }
        return false
    }

    /// A graceful stop of one node of several (PARLEY_FAILOVER=continue): no reply starts after it, and every
    /// live reply is abandoned here, not ended (`Generation.abandon`): its row stays `streaming`, and once this
    /// node's leases are released another node takes each over and continues it. Returns their ids.
    public func handOver() async -> [String] {
        shuttingDown = true
        for token in reservations.keys {
            reservations[token]?.cancelled = .interrupted
        }
        let handed = Array(live.keys)
        for generation in live.values {
            await generation.abandon()
        }
        live.removeAll()
        liveSet.removeAll()
        return handed
    }

    /// A reply this node runs whose relay stream was lost (Redis restarted): it publishes its whole state
    /// again (a snapshot under a new id), so tabs that open from now on start from it.
    public func republish(messageID: String) async {
        await live[messageID]?.republish()
    }

    /// A tool call the dead node was making (or streaming) is cancelled: nothing will finish it.
    private static func cancellingOpenCall(_ part: MessagePart) -> MessagePart {
        guard var call = part.toolCall, call.status == .streaming || call.status == .running else { return part }
        call.status = .cancelled
        return .toolCall(call)
    }
}
