/// Where a reply's events go when several nodes serve its streams (PARLEY_REDIS_URL): the generation
/// hands every batch to the relay instead of to its own subscribers, and every subscriber, on any node,
/// this one's included, follows the relay. So a tab sees an event only once the relay holds it: what
/// one node showed, any other node can replay after it (issue 24).
///
/// Runs of one message share one relay stream, ids growing across them (a continue goes on above the
/// previous run's `done`); `begin` marks where the newest run starts.
public protocol ReplyRelay: Sendable {
    /// A run starts: its log's base id and the events it logged before any batch (its snapshot). Called
    /// before the run's first `publish`; must not block (it queues).
    func begin(messageID: String, baseID: Int64, events: [GenerationEvent])
    /// Appends one batch of the run, in order; must not block (it queues).
    func publish(messageID: String, _ batch: [GenerationEvent])
    /// Follows the message's stream: the events after `lastEventID` when they are there (else the
    /// newest run from its start, its snapshot first), then live ones until `done`. `waiting`: a run is
    /// known to be live (here or on another node), so a stream not written yet is waited for; otherwise
    /// a missing stream answers `.absent` (the caller reads the store).
    func follow(messageID: String, after lastEventID: Int64?, waiting: Bool,
                deliver: @escaping @Sendable ([GenerationEvent]) -> Bool) async -> RelayFollow
    /// Asks the node that runs the message's reply to stop it; false when no node is known to run it.
    func requestStop(messageID: String) -> Bool
    /// The id of the newest event the relay holds for the message (a new run's ids start above it,
    /// whichever node's clock runs it); nil when it holds none or cannot be read.
    func lastEventID(messageID: String) -> Int64?
    /// PARLEY_MAX_GENERATIONS_PER_USER for the whole cluster: takes a slot for `owner` under `key` (a
    /// start's reservation) when fewer than `limit` are held on all nodes; false when none is left.
    /// Throws (an `HTTPError` 503) when the slots cannot be counted: the start is refused.
    func admitLive(owner: String, key: String, limit: Int) throws -> Bool
    /// Moves `owner`'s slot `from` to `to` (a reservation became the reply `to`), or frees it (`to` nil).
    func moveLive(owner: String, from: String, to: String?)
}

/// What `ReplyRelay.follow` found.
public enum RelayFollow: Sendable {
    /// Following; the closure detaches the subscriber.
    case following(cancel: @Sendable () -> Void)
    /// Everything was delivered already (the run's `done` is at or before `lastEventID`, or was just sent).
    case finished
    /// The relay holds no stream for the message.
    case absent
}
