/// The stream commands a live reply needs: append with an explicit id, replay after an id, follow.
extension RedisConnection {
    /// `XADD key [MAXLEN ~ maxLength] id field value …`. A refusal because `id` is not past the
    /// stream's top (the text Redis gives: "equal or smaller than the target stream top item") is
    /// `.duplicate`, so a retry after a lost answer is harmless; every other refusal throws.
    public func xadd(_ key: String, id: RedisStreamID, fields: [RedisStreamEntry.Field], maxLength: Int? = nil)
        throws(RedisError) -> RedisStreamAppend {
        do throws(RedisError) {
            let reply = try command(Self.xaddArguments(key, id: id, fields: fields, maxLength: maxLength))
            guard reply.text == id.description else {
                throw RedisError.protocol("XADD answered \(reply) for id \(id)")
            }
            return .accepted
        } catch .server(let text) where Self.isDuplicate(text) {
            return .duplicate
        }
    }

    /// Several `XADD`s to one stream in one round trip (pipelined: a flush of several frames), each
    /// judged as `xadd` judges one. Another refusal throws `.server` (the entries before it are stored).
    public func xadd(_ key: String, entries: [RedisStreamEntry], maxLength: Int? = nil)
        throws(RedisError) -> [RedisStreamAppend] {
        let replies = try pipeline(entries.map { Self.xaddArguments(key, id: $0.id, fields: $0.fields, maxLength: maxLength) })
        var appends: [RedisStreamAppend] = []
        appends.reserveCapacity(entries.count)
        for (entry, reply) in zip(entries, replies) {
            switch reply {
            case .error(let text) where Self.isDuplicate(text): appends.append(.duplicate)
            case .error(let text): throw .server(text)
            case _ where reply.text == entry.id.description: appends.append(.accepted)
            default: throw .protocol("XADD answered \(reply) for id \(entry.id)")
            }
        }
        return appends
    }

    private static func xaddArguments(_ key: String, id: RedisStreamID, fields: [RedisStreamEntry.Field], maxLength: Int?)
        -> [RedisArgument] {
        var arguments: [RedisArgument] = ["XADD", RedisArgument(key)]
        if let maxLength { arguments += ["MAXLEN", "~", RedisArgument(maxLength)] }
        arguments.append(RedisArgument(id.description))
        for field in fields {
            arguments.append(RedisArgument(bytes: field.name))
            arguments.append(RedisArgument(bytes: field.value))
        }
        return arguments
    }

    /// Redis's refusal of an id at or below the stream's top.
    private static func isDuplicate(_ text: String) -> Bool {
        text.contains("equal or smaller than the target stream top item")
    }

    /// `XRANGE key (after + COUNT count`: up to `count` entries with ids past `after` (from the first
    /// entry when `after` is nil), oldest first.
    public func xrange(_ key: String, after: RedisStreamID?, count: Int) throws(RedisError) -> [RedisStreamEntry] {
        let start: RedisArgument = after.map { RedisArgument("(" + $0.description) } ?? "-"
        let reply = try command(["XRANGE", RedisArgument(key), start, "+", "COUNT", RedisArgument(max(1, count))])
        guard let entries = reply.elements else { throw .protocol("XRANGE answered \(reply)") }
        var read: [RedisStreamEntry] = []
        read.reserveCapacity(entries.count)
        for entry in entries { read.append(try RedisStreamEntry(reply: entry)) }
        return read
    }

    /// `XREAD [COUNT count] BLOCK ms STREAMS key… id…`: entries past each stream's id, waiting up
    /// to `block` for the first one. Empty when the wait ends with nothing.
    ///
    /// The wait holds this connection (hiredis's context is synchronous), and its socket timeout is
    /// raised to `block` + `commandTimeout` for the call: so a blocking read must run on a connection
    /// of its own (`RedisConnectionPool.makeConnection()`), never on a pooled one, or it would hold a
    /// pool slot for the whole wait and starve the quick commands (appends, rate counters). Parley
    /// needs one such reader per node, multiplexing every followed stream in one `XREAD`; to follow a
    /// new stream without waiting out the block, the reader can also follow a wake-up stream of its
    /// node's that an `XADD` from another connection ends the wait with.
    /// `block` is at least 1 ms: `BLOCK 0` (forever) would outlive any socket timeout.
    public func xread(_ streams: [(key: String, after: RedisStreamID)], block: Duration?, count: Int? = nil)
        throws(RedisError) -> [RedisStreamBatch] {
        var arguments: [RedisArgument] = ["XREAD"]
        if let count { arguments += ["COUNT", RedisArgument(max(1, count))] }
        var timeout: Duration?
        if let block {
            let milliseconds = max(1, block.milliseconds)
            arguments += ["BLOCK", RedisArgument(milliseconds)]
            timeout = .milliseconds(milliseconds) + commandTimeout
        }
        arguments.append("STREAMS")
        arguments += streams.map { RedisArgument($0.key) }
        arguments += streams.map { RedisArgument($0.after.description) }
        let reply = try command(arguments, timeout: timeout)
        if reply == .null { return [] }
        guard let batches = reply.elements else { throw .protocol("XREAD answered \(reply)") }
        var read: [RedisStreamBatch] = []
        for batch in batches {
            guard let parts = batch.elements, parts.count == 2, let key = parts[0].text, let entries = parts[1].elements
            else { throw .protocol("an XREAD batch is not [key, [entry, …]]") }
            var decoded: [RedisStreamEntry] = []
            decoded.reserveCapacity(entries.count)
            for entry in entries { decoded.append(try RedisStreamEntry(reply: entry)) }
            read.append(RedisStreamBatch(key: key, entries: decoded))
        }
        return read
    }
}
