import Synchronization

/// The replies live on this node and their owners, readable without the `Generations` actor. Several
/// nodes: a reply's lease is renewed from this list by a thread of its own, so a node whose actor is
/// busy (a storm of starts) still renews every lease on time and no other node takes a live reply over.
public final class LiveReplies: Sendable {
    /// Per message: its owner, and whether its generation is registered (until then it is a start
    /// whose row is written: it holds a lease, while its owner's slot is still the reservation's).
    private let replies = Mutex<[String: (owner: String, registered: Bool)]>([:])

    init() {}

    func add(_ messageID: String, owner: String, registered: Bool = true) {
        replies.withLock { $0[messageID] = (owner, registered) }
    }

    func remove(_ messageID: String) {
        replies.withLock { _ = $0.removeValue(forKey: messageID) }
    }

    func removeAll() {
        replies.withLock { $0.removeAll() }
    }

    /// Every live reply, with its owner and whether it is registered.
    public var all: [(messageID: String, owner: String, registered: Bool)] {
        replies.withLock { $0.map { ($0.key, $0.value.owner, $0.value.registered) } }
    }

    public func contains(_ messageID: String) -> Bool {
        replies.withLock { $0[messageID] != nil }
    }
}
