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
    /// The cluster's activity stream: one entry (`m` = message id) per reply that got entries in one
    /// publisher pipeline, so a node's follower blocks on it alone instead of on every followed stream,
    /// and reads only the streams that moved. A hint: the reply streams stay the record.
    var activity: String { shared.key("activity") }
    /// How many activity entries Redis keeps (about): seconds of history at any load, and nodes read
    /// it as it comes; a node that fell further behind reads every stream it follows once.
    static let activityLength = 100_000
    /// A node's own stream: stops asked of it, and wake-ups of its follower.
    func node(_ nodeID: String) -> String { shared.key("node", nodeID) }
}
