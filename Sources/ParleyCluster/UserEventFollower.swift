import Foundation
import ParleyAPI
import ParleyEvents
import ParleyRedis
import Synchronization

/// The one reader per node of the cluster's notification stream: it waits on Redis (`XREAD BLOCK`
/// on a connection of its own) and hands each notification to this node's `UserEventHub`, which
/// writes it to the user's tabs here, if any. One reader for every user and tab, not one per tab.
///
/// It starts after the stream's newest entry (what came before is read from each user's own stream
/// when their first tab connects), and after a Redis failure it reconnects every half second and
/// goes on from the last entry it read, so nothing published meanwhile is skipped while Redis keeps it.
package final class UserEventFollower: Sendable {
    let events: RedisUserEvents
    let hub: UserEventHub
    /// How long one `XREAD` waits: also how long `stop` may take.
    let block: Duration
    private let stopped = Atomic<Bool>(false)

    package init(events: RedisUserEvents, hub: UserEventHub, block: Duration = .milliseconds(500)) {
        self.events = events
        self.hub = hub
        self.block = block
    }

    /// Starts the reader on a thread of its own (it blocks in hiredis).
    package func start() {
        let thread = Thread { [self] in self.run() }
        thread.name = "parley-user-events"
        thread.start()
    }

    /// Ends the reader within `block`.
    package func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    private func run() {
        let connection = events.shared.pool.makeConnection()
        let key = events.clusterKey
        var after: RedisStreamID?
        while !stopped.load(ordering: .relaxed) {
            do throws(RedisError) {
                if after == nil { after = try Self.newest(key, on: connection) }
                let batches = try connection.xread([(key, after ?? .zero)], block: block, count: 512)
                for entry in batches.flatMap(\.entries) {
                    after = entry.id
                    guard let id = entry.id.eventID, let user = entry.value("u"), let frame = entry.value("f") else { continue }
                    hub.deliver(frame, id: id, to: String(decoding: user, as: UTF8.self))
                }
            } catch {
                events.shared.noteFailure(error)
                connection.close()
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
        connection.close()
    }

    /// The id of the stream's newest entry (`0-0` when it has none).
    static func newest(_ key: String, on connection: RedisConnection) throws(RedisError) -> RedisStreamID {
        let reply = try connection.command(["XREVRANGE", RedisArgument(key), "+", "-", "COUNT", "1"])
        guard let first = reply.elements?.first else { return .zero }
        return try RedisStreamEntry(reply: first).id
    }
}
