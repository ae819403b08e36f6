/// The clients attached to one reply. Delivery is a call per subscriber per batch; one that
/// returns false has gone (its connection closed or fell too far behind) and is dropped at once.
/// With a relay (several nodes), every batch goes to the relay instead, and subscribers follow it.
struct Subscribers: Sendable {
    typealias Deliver = @Sendable ([GenerationEvent]) -> Bool

    private var all: [Int: Deliver] = [:]
    private var nextToken = 0
    /// The relay and the message it carries (nil: one node, batches go to `all`).
    var relay: (messageID: String, relay: any ReplyRelay)?

    var count: Int { all.count }

    /// Adds a subscriber; the token removes it.
    mutating func add(_ deliver: @escaping Deliver) -> Int {
        let token = nextToken
        nextToken += 1
        all[token] = deliver
        return token
    }

    mutating func remove(_ token: Int) {
        all[token] = nil
    }

    mutating func removeAll() {
        all.removeAll()
    }

    /// Hands `batch` to every subscriber, dropping those that have gone.
    mutating func deliver(_ batch: [GenerationEvent]) {
        guard !batch.isEmpty else { return }
        if let relay {
            relay.relay.publish(messageID: relay.messageID, batch)
            return
        }
        for (token, send) in all where !send(batch) {
            all[token] = nil
        }
    }
}
