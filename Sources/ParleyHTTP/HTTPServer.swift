import CMicroHTTPD
import Dispatch
import Foundation
import Synchronization

/// The HTTP face of Parley: an HTTP/1.1 server over libmicrohttpd, with a pool of epoll threads,
/// keep-alive, async handlers (the connection is suspended while the handler runs), chunked event
/// streams, pulled bodies, upload bodies streamed to temp files (`UploadRoute`) and static files, and
/// the limits that keep one client from holding it all.
///
/// What it must never know: chat, providers, replies, the store, accounts. It moves requests and bytes
/// for whoever registered the routes (`Router`); what the bytes mean is the caller's. It is also the
/// only module that touches libmicrohttpd.
///
/// Thread-safe. `start()` binds (the real port is then in `port`); `shutdown()` stops accepting, finishes
/// every event stream, waits for in-flight handlers and responses, then stops; async code calls
/// `stop()`, which does the same without blocking a thread of Swift's cooperative pool. Dropping the
/// server shuts it down.
public final class HTTPServer: Sendable {
    public let configuration: HTTPServerConfiguration
    private let core: ServerCore

    public init(configuration: HTTPServerConfiguration, router: Router) {
        self.configuration = configuration
        core = ServerCore(configuration: configuration, router: router)
    }

    deinit {
        core.shutdown()
    }

    /// The bound port (the configured one, or the kernel's pick when it was 0); 0 before `start()`.
    public var port: Int {
        core.boundPort
    }

    public func start() throws(HTTPServerError) {
        try core.start()
    }

    /// Idempotent. The first call blocks until the daemon has stopped (responses being sent and
    /// streams get `shutdownGracePeriod` to finish); a concurrent second call returns at once.
    /// Blocks its thread: from async code call `stop()` instead.
    public func shutdown() {
        core.shutdown()
    }

    /// `shutdown()` for async code: the blocking part runs on a thread of its own and the caller
    /// resumes when it is done. Why: shutdown waits up to `shutdownGracePeriod`, and for in-flight
    /// handlers, which are tasks themselves; blocking threads of the cooperative pool (one per core)
    /// for that long starves them, and with the pool full, the handlers it waits for never finish.
    public func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread { [core] in
                core.shutdown()
                continuation.resume()
            }
            thread.name = "parley-http-shutdown"
            thread.start()
        }
    }

    /// Unsent event-stream bytes across all connections, as `streamBacklogTotalLimit` counts them.
    public var unsentEventStreamBytes: Int {
        core.backlogBudget.total
    }
}

// MARK: - Core

/// Everything the C callbacks reach through their `cls` pointer.
final class ServerCore: Sendable {
    private struct Lifecycle {
        var daemon: ConnectionHandle?
        /// Writes event streams' bodies once their headers are sent (see `StreamSocketLoop`); made
        /// by `start()`, stopped by `shutdown()`.
        var streamSockets: StreamSocketLoop?
        var port = 0
        var started = false
        var shuttingDown = false
        var inFlightHandlers = 0
        /// Plain responses queued and not yet completed: shutdown lets them finish sending.
        var inFlightResponses = 0
        var streams: [ObjectIdentifier: EventStreamWriter] = [:]
        var heartbeat: HeartbeatTimer?
        /// Where upload bodies are written; prepared by `start()` when the router has upload routes.
        var uploadDirectory: UploadDirectory?
    }

    let configuration: HTTPServerConfiguration
    let router: Router
    let staticFiles: StaticFiles?
    /// Every event stream's unsent bytes together (`streamBacklogTotalLimit`).
    let backlogBudget: StreamBacklogBudget<EventStreamWriter>
    let memoryTrimmer = MemoryTrimmer()
    /// Shutdown waits on it for handlers, responses and streams to end.
    private let lifecycle = ConditionMutex(Lifecycle())
    /// Set when shutdown starts: the accept policy then refuses new connections. (Not
    /// `MHD_quiesce_daemon`: with epoll worker threads 0.9.75 may abort in it, "Failed to remove
    /// listen FD from epoll set", when a worker removed the socket first.)
    let refusingConnections = Atomic<Bool>(false)
    /// Open connections: the per-address cap and the header deadline.
    let connections: ConnectionRegistry
    /// Uploads held at once (`maxConcurrentUploads`).
    let uploadSlots: UploadSlots

    init(configuration: HTTPServerConfiguration, router: Router) {
        self.configuration = configuration
        self.router = router
        connections = ConnectionRegistry(
            perAddressLimit: configuration.perAddressLimit, exemptAddresses: configuration.trustedProxies,
            headerTimeout: configuration.headerTimeout,
            idleTimeout: configuration.connectionTimeout > 0 ? configuration.connectionTimeout : nil)
        staticFiles = configuration.publicDirectory.map { StaticFiles(directory: $0) }
        backlogBudget = StreamBacklogBudget(limit: configuration.streamBacklogTotalLimit)
        uploadSlots = UploadSlots(limit: configuration.maxConcurrentUploads)
    }

    /// The prepared upload directory; nil before `start()`, after `shutdown()` and without upload routes.
    var uploadDirectory: UploadDirectory? { lifecycle.withLock { $0.uploadDirectory } }

    var boundPort: Int { lifecycle.withLock { $0.port } }

    /// The running server's socket loop; nil before `start()` and after `shutdown()`.
    var streamSockets: StreamSocketLoop? { lifecycle.withLock { $0.streamSockets } }

    // MARK: - Starting and stopping

    func start() throws(HTTPServerError) {
        let alreadyStarted = lifecycle.withLock { state in
            defer { state.started = true }
            return state.started
        }
        if alreadyStarted { throw .alreadyStarted }
        ServerCore.raiseOpenFileLimit()
        var uploads: UploadDirectory?
        if !router.uploadMethods.isEmpty {
            do {
                uploads = try UploadDirectory.prepare(configuration.uploadDirectory)
            } catch {
                lifecycle.withLock { $0.started = false }
                throw error
            }
        }

        var flags = MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            | MHD_USE_ERROR_LOG.rawValue
        let address: SocketAddress
        switch SocketAddress(host: configuration.host, port: configuration.port) {
        case .some(let parsed): address = parsed
        case .none: throw .invalidHost(configuration.host)
        }
        if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
        guard let streamSockets = StreamSocketLoop() else {
            uploads?.close()
            ServerCore.log("could not create the event-stream socket loop (epoll, eventfd)")
            lifecycle.withLock { $0.started = false }
            throw .startFailed(host: configuration.host, port: configuration.port)
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        let daemon = address.withSockaddr { sockaddr in
            parley_mhd_start(
                flags, UInt16(clamping: configuration.port), sockaddr,
                acceptPolicy, me, accessHandler, me, requestCompleted, me, uriLogged, me, connectionNotified, me,
                UInt32(clamping: max(1, configuration.threadPoolSize)),
                UInt32(clamping: configuration.connectionLimit),
                max(4096, configuration.connectionMemoryLimit),
                UInt32(clamping: Int(configuration.connectionTimeout.rounded(.up))),
                UInt32(clamping: configuration.listenBacklog))
        }
        guard let daemon else {
            streamSockets.stop()
            uploads?.close()
            lifecycle.withLock { $0.started = false }
            throw .startFailed(host: configuration.host, port: configuration.port)
        }
        let port = Int(parley_mhd_bound_port(daemon))
        let timer = makeHeartbeatTimer()
        lifecycle.withLock { state in
            state.daemon = ConnectionHandle(raw: daemon)
            state.streamSockets = streamSockets
            state.port = port == 0 ? configuration.port : port
            state.heartbeat = HeartbeatTimer(source: timer)
            state.uploadDirectory = uploads
        }
        timer.resume()
    }

    func shutdown() {
        let taken = lifecycle.withLock { state -> (ConnectionHandle, HeartbeatTimer?, [EventStreamWriter])? in
            guard let daemon = state.daemon, !state.shuttingDown else { return nil }
            state.shuttingDown = true
            return (daemon, state.heartbeat, Array(state.streams.values))
        }
        guard let (daemon, timer, streams) = taken else { return }
        refusingConnections.store(true, ordering: .sequentiallyConsistent)
        timer?.source.cancel()
        for stream in streams { stream.finish() }

        // Streams and responses being sent get the grace period; handlers must finish (their connections
        // are suspended and MHD_stop_daemon must not see a suspended connection).
        let settled = lifecycle.wait(timeout: configuration.shutdownGracePeriod) {
            $0.inFlightHandlers == 0 && $0.inFlightResponses == 0 && $0.streams.isEmpty
        }
        if !settled {
            // Aborted streams never suspend again, so once handlers are done the daemon can stop
            // (responses still being sent are cut).
            for stream in lifecycle.withLock({ Array($0.streams.values) }) { stream.abort() }
            _ = lifecycle.wait(timeout: nil) { $0.inFlightHandlers == 0 }
        }
        MHD_stop_daemon(daemon.raw)
        let (leftovers, streamSockets, uploads) = lifecycle.withLock { state in
            state.daemon = nil
            state.heartbeat = nil
            defer {
                state.streams = [:]
                state.streamSockets = nil
                state.uploadDirectory = nil
            }
            return (Array(state.streams.values), state.streamSockets, state.uploadDirectory)
        }
        for stream in leftovers { stream.connectionEnded() }
        streamSockets?.stop()
        // Every connection is closed (NOTIFY_COMPLETED ended their uploads) and every handler returned.
        uploads?.close()
    }

    /// One timer for the periodic work: `: ping` on idle event streams, and closing connections whose
    /// request headers are late.
    private func makeHeartbeatTimer() -> DispatchSourceTimer {
        let interval = max(0.01, configuration.heartbeatInterval)
        let tick = min(1.0, interval / 2, max(0.01, configuration.headerTimeout / 4))
        let idleNanos = UInt64(interval * 1e9)
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "parley.http.heartbeat"))
        timer.schedule(deadline: .now() + tick, repeating: tick, leeway: .milliseconds(Int(tick * 100)))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let streams = lifecycle.withLock { Array($0.streams.values) }
            let now = DispatchTime.now().uptimeNanoseconds
            for stream in streams { stream.heartbeat(now: now, idleNanos: idleNanos) }
            connections.closeOverdue(now: now)
        }
        return timer
    }

    /// Each open connection is a file descriptor: lift the soft limit to the hard one.
    private static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 else { return }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(RLIMIT_NOFILE_VALUE, &limit)
            _ = getrlimit(RLIMIT_NOFILE_VALUE, &limit)
        }
        log("open-file limit \(limit.rlim_cur)")
    }

    static func log(_ message: String) {
        FileHandle.standardError.write(Data("parley-http: \(message)\n".utf8))
    }

    // MARK: - Stream registry

    /// Registers a new stream; false when shutting down (the caller finishes it at once).
    func register(_ stream: EventStreamWriter) -> Bool {
        lifecycle.withLock { state in
            state.streams[ObjectIdentifier(stream)] = stream
            return !state.shuttingDown
        }
    }

    func forget(_ stream: EventStreamWriter) {
        _ = lifecycle.withLock { $0.streams.removeValue(forKey: ObjectIdentifier(stream)) }
    }

    /// Counts a handler about to run; false when shutting down.
    func beginHandler() -> Bool {
        lifecycle.withLock { state in
            guard !state.shuttingDown else { return false }
            state.inFlightHandlers += 1
            return true
        }
    }

    func endHandler() {
        lifecycle.withLock { $0.inFlightHandlers -= 1 }
    }

    func beginResponse() {
        lifecycle.withLock { $0.inFlightResponses += 1 }
    }

    func endResponse() {
        lifecycle.withLock { $0.inFlightResponses -= 1 }
    }
}

/// libdispatch sources are thread-safe; the wrapper only lets one sit in the lifecycle mutex.
private struct HeartbeatTimer: @unchecked Sendable {
    let source: DispatchSourceTimer
}

#if canImport(Glibc)
private let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
#else
private let RLIMIT_NOFILE_VALUE = RLIMIT_NOFILE
#endif
