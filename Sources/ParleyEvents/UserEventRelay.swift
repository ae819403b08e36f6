/// How one user's notifications reach tabs on every node (several nodes, PARLEY_REDIS_URL): a
/// notification is handed to the relay, which gives it its id and brings it back to every node's
/// `UserEventHub.deliver`, this one's included; the relay also keeps each user's recent ones, so a
/// tab that reconnects to another node is replayed exactly what it missed there too.
package protocol UserEventRelay: Sendable {
    /// Sends `frame` (a notification's SSE frame without its `id:` line) to `userID`'s tabs on every node.
    func publish(_ frame: [UInt8], to userID: String)
    /// The user's last `count` notifications, oldest first, and the id above which all are there;
    /// nil when the relay cannot be read (then the tab starts from what this node saw).
    func recent(of userID: String, count: Int) -> UserEventHistory?
}

/// A user's recent notifications as the relay holds them.
package struct UserEventHistory: Sendable {
    /// Every notification with an id above this is in `entries`.
    package let floorID: Int64
    /// Oldest first, ids increasing.
    package let entries: [(id: Int64, frame: [UInt8])]

    package init(floorID: Int64, entries: [(id: Int64, frame: [UInt8])]) {
        self.floorID = floorID
        self.entries = entries
    }
}
