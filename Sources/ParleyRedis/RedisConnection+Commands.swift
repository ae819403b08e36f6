import ParleyPrimitives

/// The other commands issue 24 needs: liveness, expiry and deletion of a reply's keys, notifications
/// across nodes, and scripts (a rate counter's `INCR` and `EXPIRE` as one step).
extension RedisConnection {
    /// `PING`: throws unless the server answers `PONG`.
    public func ping() throws(RedisError) {
        let reply = try command(["PING"])
        guard reply == .status("PONG") else { throw .protocol("PING answered \(reply)") }
    }

    /// `PEXPIRE key ms`: true when the key exists (and now expires after `after`).
    @discardableResult
    public func pexpire(_ key: String, after: Duration) throws(RedisError) -> Bool {
        let reply = try command(["PEXPIRE", RedisArgument(key), RedisArgument(max(1, after.milliseconds))])
        guard let set = reply.integer else { throw .protocol("PEXPIRE answered \(reply)") }
        return set == 1
    }

    /// `DEL key…`: how many of the keys existed.
    @discardableResult
    public func del(_ keys: [String]) throws(RedisError) -> Int {
        guard !keys.isEmpty else { return 0 }
        let reply = try command(["DEL"] + keys.map { RedisArgument($0) })
        guard let removed = reply.integer else { throw .protocol("DEL answered \(reply)") }
        return Int(removed)
    }

    /// `PUBLISH channel message`: how many subscribers received it (on this server).
    @discardableResult
    public func publish(_ channel: String, _ message: [UInt8]) throws(RedisError) -> Int {
        let reply = try command(["PUBLISH", RedisArgument(channel), RedisArgument(bytes: message)])
        guard let receivers = reply.integer else { throw .protocol("PUBLISH answered \(reply)") }
        return Int(receivers)
    }

    /// Runs a Lua script: `EVALSHA` once this connection has loaded it (`SCRIPT LOAD` the first
    /// time), so the script's text crosses the wire once per connection; a server that lost its
    /// script cache (a restart, `SCRIPT FLUSH`) gets it again.
    public func eval(_ script: String, keys: [String], arguments: [RedisArgument] = []) throws(RedisError) -> RedisReply {
        let rest = [RedisArgument(keys.count)] + keys.map { RedisArgument($0) } + arguments
        let hash: String
        if let known = scriptHashes[script] {
            hash = known
        } else {
            let reply = try command(["SCRIPT", "LOAD", RedisArgument(script)])
            guard let loaded = reply.text else { throw .protocol("SCRIPT LOAD answered \(reply)") }
            scriptHashes[script] = loaded
            hash = loaded
        }
        do throws(RedisError) {
            return try command(["EVALSHA", RedisArgument(hash)] + rest)
        } catch .server(let text) where text.hasPrefix("NOSCRIPT") {
            scriptHashes[script] = nil
            return try command(["EVAL", RedisArgument(script)] + rest)
        }
    }

    /// Adds 1 to the counter `key` and returns its new value; the counter starts a window of `window`
    /// when it is created and vanishes when the window ends (a fixed-window rate limit shared by nodes).
    public func increment(_ key: String, window: Duration) throws(RedisError) -> Int64 {
        let reply = try eval(Self.incrementScript, keys: [key], arguments: [RedisArgument(max(1, window.milliseconds))])
        guard let value = reply.integer else { throw .protocol("the counter script answered \(reply)") }
        return value
    }

    /// INCR, and PEXPIRE when the INCR created the key, atomically (a crash between the two would
    /// otherwise leave a counter that never expires).
    static let incrementScript = """
        local value = redis.call('INCR', KEYS[1])
        if value == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
        return value
        """
}
