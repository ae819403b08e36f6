/// A reply that publishes through a relay (several nodes) and must publish its state again.
extension Generation {
    /// Logs a snapshot of the reply as it stands (a new id) and starts the relay's run again from it:
    /// the relay lost the run (Redis restarted), and a tab that opens now must begin from a snapshot.
    /// Tabs already following get it as the next event; it shows what they show already.
    func republish() {
        guard outcome == nil, let relay = subscribers.relay else { return }
        let snapshot = GenerationEvent(id: ids.next(), payload: .snapshot(snapshot()))
        log.append(snapshot)
        relay.relay.begin(messageID: messageID, baseID: snapshot.id - 1, events: [snapshot])
    }

    /// Hands the reply over (a graceful stop of one node of several): the upstream call ends and nothing
    /// more is published or written; another node takes it over from what its tabs were sent. The row
    /// stays `streaming` for that node; this run's waiters are never resumed (the process is ending).
    func abandon() {
        guard outcome == nil else { return }
        endGivenUp = true
        outcome = GenerationOutcome(status: .interrupted, finishReason: nil, usage: nil, patch: [], blockCount: 0,
                                    errorCode: .serverShutdown, errorMessage: nil)
        subscribers.relay = nil
        subscribers.removeAll()
        upstream?.cancel()
        wakeups.finish()
    }
}
