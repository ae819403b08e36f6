/// The Redis keys of replies and nodes, in one place.
struct ReplyKeys: Sendable {
    let shared: SharedState

    /// The stream of every run of one message's reply (entry `N-0` = event `N`).
    func stream(_ messageID: String) -> String { shared.key("reply", messageID) }
    /// The hash of the message's newest run: `base` (its log's base id) and `node` (who runs it).
    func run(_ messageID: String) -> String { shared.key("reply-run", messageID) }
    /// The lease of the node running the message's reply: its node id, expiring unless renewed.
    func lease(_ messageID: String) -> String { shared.key("lease", messageID) }
    /// One user's live replies on every node: a sorted set of slots (a start's reservation, then its
    /// message id) scored by when each lapses unless the node running it renews it.
    func live(_ owner: String) -> String { shared.key("live", owner) }
    /// A node's own stream: stops asked of it, and wake-ups of its follower.
    func node(_ nodeID: String) -> String { shared.key("node", nodeID) }
}
