import CHiredis
import Glibc
import ParleyPrimitives

/// One synchronous connection to Redis (a hiredis 0.14 context): a command is sent and its answer
/// awaited on the calling thread, within `commandTimeout`.
///
/// Why synchronous: a command on loopback answers in tens of microseconds, less than an async hop
/// costs, and hiredis's blocking API keeps the wrapper small. Callers that must not block share a
/// `RedisConnectionPool`; the one long wait (`XREAD BLOCK`) gets a connection of its own.
///
/// Failures: an I/O error or a timeout drops the context (its socket may hold half an answer), and
/// the next call connects again. Before each command on an idle connection, a zero-wait `poll`
/// notices a peer that hung up (`CLIENT KILL`, a restarted server) so that command goes out on a
/// fresh connection instead of failing. A command that fails mid-flight is never resent here: only
/// the caller knows whether it is idempotent (an `XADD` with an explicit id is).
///
/// Not thread-safe: one thread at a time (the pool guarantees it).
public final class RedisConnection {
    public let url: RedisURL
    public let connectTimeout: Duration
    public let commandTimeout: Duration
    private var context: UnsafeMutablePointer<redisContext>?
    /// How many times this connection has connected: a caller that sees it change knows the server
    /// may have restarted in between (and lost what it held, without persistence).
    public private(set) var connects = 0
    /// SHA1 of each script this connection has loaded (`SCRIPT LOAD`), for `EVALSHA`.
    var scriptHashes: [String: String] = [:]

    /// Does not connect: the first command does (so a pool can be made while Redis is still starting).
    public init(url: RedisURL, connectTimeout: Duration = .seconds(2), commandTimeout: Duration = .seconds(2)) {
        self.url = url
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
    }

    deinit {
        if let context { redisFree(context) }
    }

    /// Whether a socket is open now (it may still turn out to be dead on the next command).
    public var isConnected: Bool { context != nil }

    /// Connects (and signs in, and selects the database) unless already connected.
    public func connect() throws(RedisError) {
        _ = try liveContext()
    }

    /// Closes the socket; the next command connects again.
    public func close() {
        if let context { redisFree(context) }
        context = nil
        scriptHashes = [:]
    }

    /// Sends one command and returns its answer. An error reply is thrown as `RedisError.server`.
    public func command(_ arguments: [RedisArgument]) throws(RedisError) -> RedisReply {
        try command(arguments, timeout: nil)
    }

    /// `command` with a socket timeout of `timeout` instead of `commandTimeout`, for this call only
    /// (`XREAD BLOCK` waits longer than a command may).
    func command(_ arguments: [RedisArgument], timeout: Duration?) throws(RedisError) -> RedisReply {
        let context = try liveContext()
        if let timeout { try setTimeout(timeout, on: context) }
        let reply = try roundTrip(arguments, on: context)
        if timeout != nil { try setTimeout(commandTimeout, on: context) }
        if case .error(let text) = reply { throw .server(text) }
        return reply
    }

    /// One command on `context` as it is (no reconnect): its reply, error replies included.
    private func roundTrip(_ arguments: [RedisArgument], on context: UnsafeMutablePointer<redisContext>)
        throws(RedisError) -> RedisReply {
        let raw = Self.withArgv(arguments) { argc, argv, lengths in redisCommandArgv(context, argc, argv, lengths) }
        guard let raw else { throw failure(of: context) }
        return Self.consume(raw)
    }

    /// Sends every command, then reads every answer: one round trip for all. Error replies stay
    /// `.error` in their place; a broken connection throws (and which commands ran is unknown).
    public func pipeline(_ commands: [[RedisArgument]]) throws(RedisError) -> [RedisReply] {
        let context = try liveContext()
        for arguments in commands {
            let status = Self.withArgv(arguments) { argc, argv, lengths in
                redisAppendCommandArgv(context, argc, argv, lengths)
            }
            guard status == REDIS_OK else { throw failure(of: context) }
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReply(context, &raw) == REDIS_OK, let raw else { throw failure(of: context) }
            replies.append(Self.consume(raw))
        }
        return replies
    }

    // MARK: - The context

    private func liveContext() throws(RedisError) -> UnsafeMutablePointer<redisContext> {
        if let context, !Self.peerHungUp(context) { return context }
        close()
        let timeout = Self.timeval(connectTimeout)
        let made: UnsafeMutablePointer<redisContext>? = switch url.endpoint {
        case .tcp(let host, let port): redisConnectWithTimeout(host, Int32(port), timeout)
        case .unix(let path): redisConnectUnixWithTimeout(path, timeout)
        }
        guard let made else { throw .connection("cannot allocate a hiredis context") }
        guard made.pointee.err == 0 else {
            let text = Self.errorText(made)
            redisFree(made)
            throw .connection("cannot connect to \(url): \(text)")
        }
        context = made
        connects += 1
        do {
            try setTimeout(commandTimeout, on: made)
            try signIn(on: made)
        } catch {
            close()
            throw error
        }
        return made
    }

    /// AUTH and SELECT from the URL, on the context just made (a refusal is a connection error:
    /// the connection is unusable, whatever command was about to be sent).
    private func signIn(on context: UnsafeMutablePointer<redisContext>) throws(RedisError) {
        if let password = url.password {
            var arguments: [RedisArgument] = ["AUTH"]
            if let user = url.user { arguments.append(RedisArgument(user)) }
            arguments.append(RedisArgument(password))
            if case .error(let text) = try roundTrip(arguments, on: context) {
                throw .connection("\(url) refused the sign-in: \(text)")
            }
        }
        if url.database != 0, case .error(let text) = try roundTrip(["SELECT", RedisArgument(url.database)], on: context) {
            throw .connection("\(url) refused database \(url.database): \(text)")
        }
    }

    private func setTimeout(_ timeout: Duration, on context: UnsafeMutablePointer<redisContext>) throws(RedisError) {
        guard redisSetTimeout(context, Self.timeval(timeout)) == REDIS_OK else { throw failure(of: context) }
    }

    /// The typed error for a failed call on `context`, which is dropped: after an I/O or protocol
    /// error hiredis's context cannot be used again.
    private func failure(of context: UnsafeMutablePointer<redisContext>) -> RedisError {
        let savedErrno = errno
        let code = context.pointee.err
        let text = Self.errorText(context)
        close()
        if code == REDIS_ERR_IO && (savedErrno == EAGAIN || savedErrno == EWOULDBLOCK) { return .timeout }
        if code == REDIS_ERR_PROTOCOL { return .protocol(text) }
        if code == REDIS_ERR_EOF { return .connection("\(url) closed the connection") }
        return .connection("\(url): \(text)")
    }

    /// True when an idle connection's socket is readable: with no command in flight that can only be
    /// the peer's close (or bytes nobody asked for), so the connection is not to be used.
    private static func peerHungUp(_ context: UnsafeMutablePointer<redisContext>) -> Bool {
        var descriptor = pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) != 0
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    private static func timeval(_ duration: Duration) -> Glibc.timeval {
        let milliseconds = max(1, duration.milliseconds)
        return Glibc.timeval(tv_sec: Int(milliseconds / 1000), tv_usec: Int(milliseconds % 1000) * 1000)
    }

    // MARK: - Arguments and replies

    /// Lays the arguments out in one buffer and calls `body` with hiredis's argc/argv/argvlen.
    private static func withArgv<T>(
        _ arguments: [RedisArgument],
        _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> T
    ) -> T {
        var buffer: [UInt8] = []
        var offsets: [Int] = []
        var lengths: [Int] = []
        buffer.reserveCapacity(arguments.reduce(1) { $0 + $1.bytes.count })
        for argument in arguments {
            offsets.append(buffer.count)
            lengths.append(argument.bytes.count)
            buffer.append(contentsOf: argument.bytes)
        }
        buffer.append(0)  // never empty, so the base address exists even for empty arguments
        offsets.append(buffer.count - 1)  // and one spare entry past argc, so argv exists for zero arguments
        lengths.append(0)
        return buffer.withUnsafeBytes { raw in
            let base = raw.baseAddress.unsafelyUnwrapped
            var pointers: [UnsafePointer<CChar>?] = offsets.map {
                base.advanced(by: $0).assumingMemoryBound(to: CChar.self)
            }
            return pointers.withUnsafeMutableBufferPointer { argv in
                lengths.withUnsafeBufferPointer { lengths in
                    body(Int32(arguments.count), argv.baseAddress.unsafelyUnwrapped, lengths.baseAddress.unsafelyUnwrapped)
                }
            }
        }
    }

    /// Copies a hiredis reply tree into a `RedisReply` and frees it.
    private static func consume(_ raw: UnsafeMutableRawPointer) -> RedisReply {
        let reply = raw.assumingMemoryBound(to: redisReply.self)
        defer { freeReplyObject(raw) }
        return convert(reply)
    }

    private static func convert(_ reply: UnsafePointer<redisReply>) -> RedisReply {
        let node = reply.pointee
        switch node.type {
        case REDIS_REPLY_STRING: return .string(bytes(node))
        case REDIS_REPLY_STATUS: return .status(String(decoding: bytes(node), as: UTF8.self))
        case REDIS_REPLY_ERROR: return .error(String(decoding: bytes(node), as: UTF8.self))
        case REDIS_REPLY_INTEGER: return .integer(Int64(node.integer))
        case REDIS_REPLY_ARRAY:
            guard let elements = node.element else { return .array([]) }
            return .array((0..<node.elements).map { index in elements[index].map { convert($0) } ?? .null })
        default: return .null  // REDIS_REPLY_NIL
        }
    }

    private static func bytes(_ node: redisReply) -> [UInt8] {
        guard let text = node.str, node.len > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: text, count: node.len))
    }
}
