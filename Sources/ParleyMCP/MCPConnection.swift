import ParleyPrimitives

/// One configured server's connection: connects (handshake, tool list), keeps it, reconnects with
/// backoff when it drops (a crashed child is restarted), and runs calls on it.
///
/// Concurrency: an actor; every wait (a send, an answer, a backoff) is a suspension, so one slow call
/// never holds another. Each connection's life is one `Session`; events of an ended session are ignored.
actor MCPConnection {
    /// One connection's life: its transport and what the handshake agreed.
    struct Session {
        let number: Int
        let transport: any MCPTransport
        var version: String?
        /// Handshake and first tool list done: calls are accepted.
        var ready = false
        var stateless: Bool { version.map(MCPProtocol.isStateless) ?? false }
    }

    let configuration: MCPServerConfiguration
    let settings: MCPSettings
    private let makeTransport: @Sendable () -> any MCPTransport
    let board: ToolBoard
    private let logger: @Sendable (String) -> Void
    let clientVersion: String

    var session: Session?
    private var sessions = 0
    var nextID: Int64 = 1
    var pending: [Int64: PendingRequest] = [:]
    private var lifecycle: Task<Void, Never>?
    private var endOfSession: CheckedContinuation<Void, Never>?
    private var firstAttempt: CheckedContinuation<Void, Never>?
    private var stopped = false
    private var refreshing = false
    private var refreshAgain = false
    var reinitializing: Task<Bool, Never>?

    init(configuration: MCPServerConfiguration, settings: MCPSettings, board: ToolBoard, clientVersion: String,
         log: @escaping @Sendable (String) -> Void, makeTransport: @escaping @Sendable () -> any MCPTransport) {
        self.configuration = configuration
        self.settings = settings
        self.board = board
        self.clientVersion = clientVersion
        self.logger = log
        self.makeTransport = makeTransport
    }

    var name: String { configuration.name }

    func log(_ text: String) { logger("MCP server '\(name)': \(text)") }

    // MARK: - Life

    /// Starts the connection loop and returns after the first attempt (connected or not).
    func start() async {
        guard lifecycle == nil, !stopped else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            firstAttempt = continuation
            lifecycle = Task { await self.run() }
        }
    }

    /// Ends the session (stopping the child or ending the HTTP session) and every retry.
    func shutdown() async {
        stopped = true
        lifecycle?.cancel()
        if let number = session?.number { await endSession(number, reason: "Parley is shutting down") }
        await lifecycle?.value
        firstAttempt?.resume()
        firstAttempt = nil
    }

    private func run() async {
        var failures = 0
        while !stopped && !Task.isCancelled {
            let began = ContinuousClock.now
            let connected = await connect()
            firstAttempt?.resume()
            firstAttempt = nil
            if connected {
                if session != nil {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in endOfSession = continuation }
                }
                if ContinuousClock.now - began >= settings.stableUptime { failures = 0 }
            }
            if stopped || Task.isCancelled { break }
            var wait = settings.restartBackoffInitial
            for _ in 0..<min(failures, 30) where wait < settings.restartBackoffMax { wait *= 2 }
            wait = min(wait, settings.restartBackoffMax)
            failures += 1
            log("next connection attempt in \(Self.seconds(wait))")
            try? await Task.sleep(for: wait)
        }
    }

    /// One attempt: transport, handshake, tool list. True when the server is ready.
    private func connect() async -> Bool {
        sessions += 1
        let number = sessions
        let transport = makeTransport()
        let (events, continuation) = AsyncStream.makeStream(of: TransportEvent.self)
        do {
            try await transport.open(events: continuation)
        } catch {
            log("unavailable: \(Self.describe(error))")
            return false
        }
        session = Session(number: number, transport: transport)
        Task { for await event in events { await self.handle(event, session: number) } }
        do {
            try await handshake(number)
            try await refreshTools(number)
        } catch {
            log("unavailable: \(error.message)")
            await endSession(number, reason: error.message)
            return false
        }
        guard session?.number == number, !stopped else { return false }
        session?.ready = true
        board.update(name, available: true)
        let count = board.entry(name)?.tools.count ?? 0
        log("connected (protocol \(session?.version ?? "?"), \(count) tool\(count == 1 ? "" : "s"))")
        return true
    }

    /// Ends session `number` if it is the current one: calls in flight fail, the transport closes,
    /// the loop reconnects (unless stopped).
    func endSession(_ number: Int, reason: String) async {
        guard let ended = session, ended.number == number else { return }
        session = nil
        board.update(name, available: false)
        for id in pending.keys.sorted() {
            finish(id, .failure(MCPCallError(.serverUnavailable, "MCP server '\(name)' is unavailable: \(reason)")))
        }
        await ended.transport.close()
        endOfSession?.resume()
        endOfSession = nil
    }

    // MARK: - Handshake

    /// `server/discover` at the stateless version when the transport can speak it, else (or when the
    /// server does not) `initialize` → `notifications/initialized`.
    func handshake(_ number: Int) async throws(MCPCallError) {
        guard let transport = session?.transport else { throw unavailable("the connection ended") }
        if settings.offerStatelessProtocol && transport.supportsStatelessProtocol {
            transport.negotiated(version: MCPProtocol.statelessVersion)
            session?.version = MCPProtocol.statelessVersion
            let answer = await request("server/discover", [:], timeout: settings.handshakeTimeout)
            switch answer {
            case .success(let result):
                let versions = result["supportedVersions"]?.arrayValue?.compactMap(\.stringValue) ?? []
                if versions.contains(MCPProtocol.statelessVersion) { return }
            case .failure(let error) where error.kind == .serverUnavailable || error.kind == .timeout || error.kind == .cancelled:
                throw error
            case .failure:
                break
            }
            transport.negotiated(version: nil)
            session?.version = nil
        }
        let params: [String: JSON] = [
            "protocolVersion": .string(MCPProtocol.handshakeVersion),
            "capabilities": .object([:]),
            "clientInfo": clientInfo,
        ]
        let result = try await request("initialize", params, timeout: settings.handshakeTimeout).get()
        let version = result["protocolVersion"]?.stringValue ?? "none"
        guard MCPProtocol.handshakeVersions.contains(version) else {
            throw MCPCallError(.protocolError, "the server speaks protocol version \(version); Parley speaks "
                               + (MCPProtocol.handshakeVersions + [MCPProtocol.statelessVersion]).joined(separator: ", "))
        }
        guard session?.number == number else { throw unavailable("the connection ended") }
        session?.version = version
        transport.negotiated(version: version)
        await notify("notifications/initialized", nil)
    }

    var clientInfo: JSON { .object(["name": .string("parley"), "version": .string(clientVersion)]) }

    // MARK: - Tools

    /// Reads the whole tool list (following `nextCursor`, at most `maxToolPages` pages) and publishes it.
    func refreshTools(_ number: Int) async throws(MCPCallError) {
        var tools: [MCPTool] = []
        var cursor: String?
        var pages = 0
        repeat {
            pages += 1
            if pages > settings.maxToolPages {
                log("tools/list: stopped after \(settings.maxToolPages) pages (maxToolPages)")
                break
            }
            var params: [String: JSON] = [:]
            if let cursor { params["cursor"] = .string(cursor) }
            let result = try await request("tools/list", params, timeout: settings.handshakeTimeout).get()
            guard let items = result["tools"]?.arrayValue else { throw MCPCallError(.protocolError, "tools/list gave no 'tools' array") }
            for item in items {
                guard let tool = MCPTool(server: name, listed: item) else {
                    log("tools/list: skipped an entry without a name")
                    continue
                }
                tools.append(tool)
            }
            cursor = result["nextCursor"]?.stringValue
            if cursor?.isEmpty == true { cursor = nil }
        } while cursor != nil
        guard session?.number == number else { throw unavailable("the connection ended") }
        if let allowed = configuration.allowedTools {
            let listed = Set(tools.map(\.name))
            for missing in allowed where !listed.contains(missing) { log("'tools' names '\(missing)', which the server does not list") }
            tools = tools.filter { allowed.contains($0.name) }
        }
        if tools.count > settings.maxTools {
            log("keeps its first \(settings.maxTools) tools of \(tools.count) (maxTools)")
            tools = Array(tools.prefix(settings.maxTools))
        }
        board.update(name, tools: tools)
    }

    /// Refreshes the list after `notifications/tools/list_changed`; changes told meanwhile cause one more pass.
    func scheduleRefresh() async {
        guard let number = session?.number, session?.ready == true else { return }
        if refreshing {
            refreshAgain = true
            return
        }
        refreshing = true
        repeat {
            refreshAgain = false
            do {
                try await refreshTools(number)
            } catch {
                log("tools/list after a change failed: \(error.message)")
            }
        } while refreshAgain && session?.number == number
        refreshing = false
    }

    func unavailable(_ reason: String) -> MCPCallError {
        MCPCallError(.serverUnavailable, "MCP server '\(name)' is unavailable: \(reason)")
    }

    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let value = Double(seconds) + Double(attoseconds) / 1e18
        return value == value.rounded() ? "\(Int(value)) s" : "\((value * 10).rounded() / 10) s"
    }

    static func describe(_ failure: any Error) -> String {
        guard let failure = failure as? TransportFailure else { return "\(failure)" }
        switch failure {
        case .unavailable(let text), .rejected(let text), .protocolError(let text): return text
        case .sessionExpired: return "the session expired"
        case .cancelled: return "cancelled"
        }
    }
}
