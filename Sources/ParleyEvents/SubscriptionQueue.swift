/// Lets the streams of one message subscribe one at a time.
///
/// Why: a stream of a reply that no generation holds any more gets a snapshot built from the store
/// (for a 1 MB reply, about 3 MB of text and HTML). `Generations` builds it off its actor and then
/// hops back to deliver it, so 400 clients arriving at once had 400 snapshots built before the first
/// was delivered: RSS grew by 1.5 MB per waiting client. In turn, each snapshot is delivered (its
/// frame shared, its strings freed) before the next is built. Subscribing to a live reply is one
/// short actor call, so taking turns costs those streams nothing noticeable.
///
/// Concurrency contract: an actor; `run` may be called from any task. Different messages never wait
/// for each other.
package actor SubscriptionQueue {
    /// Messages with a subscription in progress, and the streams waiting for it.
    private var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]

    package init() {}

    /// Runs `body` once no other `run` for `messageID` is in progress.
    package func run<T: Sendable>(_ messageID: String, _ body: @Sendable () async throws -> T) async rethrows -> T {
        if waiting[messageID] != nil {
            await withCheckedContinuation { waiting[messageID, default: []].append($0) }
        } else {
            waiting[messageID] = []
        }
        defer { handOver(messageID) }
        return try await body()
    }

    /// Wakes the next waiting stream, or marks the message free.
    private func handOver(_ messageID: String) {
        guard var queue = waiting[messageID], !queue.isEmpty else {
            waiting[messageID] = nil
            return
        }
        let next = queue.removeFirst()
        waiting[messageID] = queue
        next.resume()
    }

    /// Messages with a subscription in progress (for tests).
    var busyCount: Int { waiting.count }
}
