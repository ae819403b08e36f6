import ParleyAPI
import ParleyAccounts
import ParleyPrimitives
import ParleyRedis

/// Sign-in attempts counted in Redis in fixed windows, so PARLEY_LOGIN_ATTEMPTS holds across nodes:
/// the same rule as `AttemptLimiter` (an attempt counts when it begins, a success gives it back),
/// one counter per key that expires with its window, checked and counted by one Lua script.
package struct RedisSignInAttempts: SignInAttempts {
    let limit: Int
    let window: Duration
    let shared: SharedState

    package init(limit: Int, window: Duration, shared: SharedState) {
        self.limit = limit
        self.window = window
        self.shared = shared
    }

    package func begin(_ keys: [String]) throws -> Int? {
        let redisKeys = keys.map { shared.key("attempts", $0) }
        let arguments = [RedisArgument(limit), RedisArgument(max(1, window.milliseconds))]
        let reply = try shared.counting { connection throws(RedisError) in
            try connection.eval(Self.beginScript, keys: redisKeys, arguments: arguments)
        }
        guard let wait = reply.integer else { throw APIErrors.limitsUnavailable }
        return wait > 0 ? Int(wait) : nil
    }

    package func succeeded(_ keys: [String], clearing: Set<String>) {
        let given = keys.filter { !clearing.contains($0) }.map { shared.key("attempts", $0) }
        let cleared = keys.filter { clearing.contains($0) }.map { shared.key("attempts", $0) }
        // Best effort: a count not given back only makes the window stricter.
        _ = try? shared.counting { connection throws(RedisError) in
            try connection.eval(Self.succeededScript, keys: given + cleared, arguments: [RedisArgument(given.count)])
        }
    }

    /// KEYS: the attempt counters; ARGV[1]: the limit, ARGV[2]: the window (ms). Returns 0 when the
    /// attempt may go (every counter now counts it), else the seconds until the fullest window ends.
    static let beginScript = """
        local limit = tonumber(ARGV[1])
        local wait = 0
        for _, key in ipairs(KEYS) do
            local count = tonumber(redis.call('GET', key) or '0')
            if count >= limit then
                local left = redis.call('PTTL', key)
                if left > 0 then wait = math.max(wait, math.ceil(left / 1000)) end
            end
        end
        if wait > 0 then return wait end
        for _, key in ipairs(KEYS) do
            if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, ARGV[2]) end
        end
        return 0
        """

    /// KEYS: the first ARGV[1] counters get one attempt back; the rest are deleted.
    static let succeededScript = """
        local given = tonumber(ARGV[1])
        for index, key in ipairs(KEYS) do
            if index <= given then
                if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
            else
                redis.call('DEL', key)
            end
        end
        return 0
        """
}
