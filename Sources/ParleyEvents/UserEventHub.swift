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
    private let channels = Mutex<[String: UserEventChannel]>([:])

    package init(logCapacity: Int) {
        self.logCapacity = logCapacity
    }

    /// Tells every tab of `userID` about `notification`.
    func publish(_ notification: UserNotification, to userID: String) {
        guard let channel = channels.withLock({ $0[userID] }) else { return }
        channel.publish(notification.frame, now: EventIDClock.now())
    }

    /// Whether a tab of `userID` has connected since the server started.
    func hasChannel(for userID: String) -> Bool {
        channels.withLock { $0[userID] != nil }
    }

    /// The user's channel, created on first use.
    func channel(for userID: String) -> UserEventChannel {
        channels.withLock { channels in
            if let channel = channels[userID] { return channel }
            let channel = UserEventChannel(capacity: logCapacity, now: EventIDClock.now())
            channels[userID] = channel
            return channel
        }
    }

    /// Streams connected now, over all users (for tests and logs).
    var streamCount: Int {
        channels.withLock { Array($0.values) }.reduce(0) { $0 + $1.streamCount }
    }
}
