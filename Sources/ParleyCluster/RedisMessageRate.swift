import ParleyAPI
import ParleyQuotas
import ParleyRedis

/// Messages per minute per user counted in Redis, so the rate holds across nodes: the same token
/// bucket as `MessageRateLimiter` (capacity = the rate, refilled continuously), kept in one hash per
/// user and updated by one Lua script on Redis's clock (nodes' clocks never disagree about it).
/// A bucket that is full again expires, so idle users cost nothing.
package struct RedisMessageRate: MessageRateLimit {
    package let perMinute: Int
    let shared: SharedState

    package init(perMinute: Int, shared: SharedState) {
        self.perMinute = perMinute
        self.shared = shared
    }

    package func take(_ userID: String) throws -> Int? {
        let key = shared.key("rate", userID)
        let perMinute = perMinute
        let reply = try shared.counting { connection throws(RedisError) in
            try connection.eval(Self.script, keys: [key], arguments: [RedisArgument(perMinute)])
        }
        guard let wait = reply.integer else { throw APIErrors.limitsUnavailable }
        return wait > 0 ? Int(wait) : nil
    }

    /// KEYS[1]: the user's bucket {t: tokens, u: updated (s)}; ARGV[1]: messages per minute. Returns 0
    /// when a token was taken, else the whole seconds until one is back (at least 1).
    static let script = """
        local capacity = tonumber(ARGV[1])
        local perSecond = capacity / 60
        local time = redis.call('TIME')
        local now = tonumber(time[1]) + tonumber(time[2]) / 1000000
        local state = redis.call('HMGET', KEYS[1], 't', 'u')
        local tokens = tonumber(state[1]) or capacity
        local updated = tonumber(state[2]) or now
        if now > updated then
            tokens = math.min(capacity, tokens + (now - updated) * perSecond)
            updated = now
        end
        local wait = 0
        if tokens >= 1 then
            tokens = tokens - 1
        elseif perSecond > 0 then
            wait = math.max(1, math.ceil((1 - tokens) / perSecond))
        else
            wait = 60
        end
        redis.call('HSET', KEYS[1], 't', string.format('%.6f', tokens), 'u', string.format('%.6f', updated))
        redis.call('PEXPIRE', KEYS[1], 61000)
        return wait
        """
}
