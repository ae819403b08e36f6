import ParleyAPI
import ParleyEvents
import ParleyRedis

/// Each user's notifications (`/api/events`) carried to every node through Redis: one Lua script
/// gives a notification its id (Redis's clock in microseconds, above every earlier one) and appends it
/// both to the cluster's notification stream, which every node's `UserEventFollower` reads, and to
/// the user's own stream, which keeps their last PARLEY_USER_EVENT_LOG for tabs that reconnect to
/// another node. So every node hands a user's notifications to tabs in one order, under one id.
package struct RedisUserEvents: UserEventRelay {
    let shared: SharedState
    /// PARLEY_USER_EVENT_LOG: kept per user.
    let capacity: Int
    /// How long a user's stream outlives their last notification.
    let retention: Duration
    /// About how many notifications of all users the cluster stream keeps for followers catching up.
    let clusterLength: Int

    package init(shared: SharedState, capacity: Int, retention: Duration = .seconds(86_400), clusterLength: Int = 10_000) {
        self.shared = shared
        self.capacity = capacity
        self.retention = retention
        self.clusterLength = clusterLength
    }

    /// The stream every node follows.
    var clusterKey: String { shared.key("events") }

    func userKey(_ userID: String) -> String { shared.key("user-events", userID) }
    func floorKey(_ userID: String) -> String { shared.key("user-events-floor", userID) }

    package func publish(_ frame: [UInt8], to userID: String) {
        let keys = [clusterKey, userKey(userID), floorKey(userID)]
        let arguments = [RedisArgument(userID), RedisArgument(bytes: frame), RedisArgument(capacity),
                         RedisArgument(max(1_000, retention.milliseconds)), RedisArgument(clusterLength)]
        // A notification Redis did not take is lost (logged by `counting`); tabs see the change on their next read.
        _ = try? shared.counting { connection throws(RedisError) in
            try connection.eval(Self.publishScript, keys: keys, arguments: arguments)
        }
    }

    package func recent(of userID: String, count: Int) -> UserEventHistory? {
        let commands: [[RedisArgument]] = [
            ["XREVRANGE", RedisArgument(userKey(userID)), "+", "-", "COUNT", RedisArgument(max(1, count))],
            ["GET", RedisArgument(floorKey(userID))],
            ["TIME"],
        ]
        guard let replies = try? shared.counting({ connection throws(RedisError) in try connection.pipeline(commands) }),
              replies.count == 3, let newestFirst = replies[0].elements else { return nil }
        var entries: [(id: Int64, frame: [UInt8])] = []
        for reply in newestFirst.reversed() {
            guard let entry = try? RedisStreamEntry(reply: reply), let id = entry.id.eventID,
                  let frame = entry.value("f") else { continue }
            entries.append((id, frame))
        }
        // No stream: nothing kept (never, or expired); ids from now on are above Redis's clock now.
        var floor: Int64
        if let text = replies[1].text, let kept = Int64(text), let first = entries.first {
            // A full stream has dropped older ones: only what follows its first entry is whole.
            floor = entries.count >= count ? max(kept, first.id) : kept
        } else if let now = replies[2].elements?.compactMap(\.text), now.count == 2,
                  let seconds = Int64(now[0]), let micros = Int64(now[1]) {
            floor = seconds * 1_000_000 + micros
        } else {
            return nil
        }
        return UserEventHistory(floorID: floor, entries: entries)
    }

    /// KEYS: cluster stream, user stream, user floor; ARGV: user id, frame, per-user capacity,
    /// retention (ms), cluster stream length. Returns the entry id (`N-0`, N the notification id).
    static let publishScript = """
        local function top(key)
            local last = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)
            if last[1] then return tonumber(string.match(last[1][1], '^(%d+)')) end
            return 0
        end
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
        local id = math.max(now, top(KEYS[1]) + 1, top(KEYS[2]) + 1)
        local entry = string.format('%.0f', id) .. '-0'
        if redis.call('EXISTS', KEYS[2]) == 0 then
            redis.call('SET', KEYS[3], string.format('%.0f', id - 1), 'PX', ARGV[4])
        else
            redis.call('PEXPIRE', KEYS[3], ARGV[4])
        end
        redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[5], entry, 'u', ARGV[1], 'f', ARGV[2])
        redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[3], entry, 'f', ARGV[2])
        redis.call('PEXPIRE', KEYS[2], ARGV[4])
        return entry
        """
}
