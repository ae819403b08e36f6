import ParleyGeneration
import Synchronization

/// Module ParleyEvents: what browsers receive as event streams (reply frames, each user's
/// notifications). It must never know accounts' internals or providers: a caller and a reply's
/// events are all it is given.
///
/// Every user's notification channel (`UserEventChannel`), created when the user's first tab connects.
/// A user with no channel has no tab that could resume, so what is published for them is dropped.
/// Channels are kept for the server's life: at most one per user, each holding at most
/// `logCapacity` small notifications (PARLEY_USER_EVENT_LOG).
///
/// Concurrency contract: thread-safe; the map's mutex is held only to find or add a channel.
package final class UserEventHub: Sendable {
    let logCapacity: Int
    /// With several nodes: what carries notifications to every node and keeps each user's recent ones.
    private let relay: (any UserEventRelay)?
    private let channels = Mutex<[String: UserEventChannel]>([:])

    /// - Parameter relay: nil on one node (notifications stay in this process).
    package init(logCapacity: Int, relay: (any UserEventRelay)? = nil) {
        self.logCapacity = logCapacity
        self.relay = relay
    }

    /// Tells every tab of `userID` about `notification`: on this node at once, or through the relay
    /// (which brings it back to `deliver` on every node, this one included).
    func publish(_ notification: UserNotification, to userID: String) {
        if let relay {
            relay.publish(notification.frame, to: userID)
            return
        }
        guard let channel = channels.withLock({ $0[userID] }) else { return }
        channel.publish(notification.frame, now: EventIDClock.now())
    }

    /// A notification the relay brought, with its id: written to the user's tabs on this node, if any.
    package func deliver(_ frame: [UInt8], id: Int64, to userID: String) {
        guard let channel = channels.withLock({ $0[userID] }) else { return }
        channel.publish(frame, id: id)
    }

    /// Whether a tab of `userID` may be watching: one connected to this node since it started, or,
    /// with several nodes, any (a tab on another node cannot be seen from here).
    func hasChannel(for userID: String) -> Bool {
        relay != nil || channels.withLock { $0[userID] != nil }
    }

    /// The user's channel, created on first use. With a relay, a new channel starts from the user's
    /// recent notifications there, so a tab that comes from another node resumes exactly; those
    /// published while it was being made are read again once it is in place (`deliver` skips repeats).
    func channel(for userID: String) -> UserEventChannel {
        if let channel = channels.withLock({ $0[userID] }) { return channel }
        guard let relay else {
            return channels.withLock { channels in
                if let channel = channels[userID] { return channel }
                let channel = UserEventChannel(capacity: logCapacity, now: EventIDClock.now())
                channels[userID] = channel
                return channel
            }
        }
        let history = relay.recent(of: userID, count: logCapacity)
        let made = history.map { UserEventChannel(capacity: logCapacity, history: $0) }
            ?? UserEventChannel(capacity: logCapacity, now: EventIDClock.now())
        let (channel, isNew) = channels.withLock { channels in
            if let channel = channels[userID] { return (channel, false) }
            channels[userID] = made
            return (made, true)
        }
        if isNew, let again = relay.recent(of: userID, count: logCapacity) {
            for entry in again.entries { channel.publish(entry.frame, id: entry.id) }
        }
        return channel
    }

    /// Streams connected now, over all users (for tests and logs).
    var streamCount: Int {
        channels.withLock { Array($0.values) }.reduce(0) { $0 + $1.streamCount }
    }
}
