import ParleyPrimitives

/// A request of Parley's waiting for its answer.
struct PendingRequest {
    let method: String
    let session: Int
    let continuation: CheckedContinuation<Result<JSON, MCPCallError>, Never>
    /// Reset by each progress notification for this request's token.
    let timeout: Duration
    var deadline: ContinuousClock.Instant
    let onProgress: (@Sendable () -> Void)?
    /// The send (HTTP: the whole exchange); cancelled to abandon the request.
    var exchange: Task<Void, Never>?
    var watchdog: Task<Void, Never>?
}

extension MCPConnection {
    // MARK: - Calls

    /// Calls a listed tool; see `MCPServers.call`.
    func call(tool: String, arguments: JSON, onProgress: (@Sendable () -> Void)?) async throws(MCPCallError) -> MCPToolResult {
        guard session?.ready == true else { throw unavailable("it is not connected") }
        guard board.entry(name)?.tools.contains(where: { $0.name == tool }) == true else {
            throw MCPCallError(.unknownTool, "MCP server '\(name)' offers no tool '\(tool)'")
        }
        let params: [String: JSON] = ["name": .string(tool), "arguments": arguments == .null ? .object([:]) : arguments]
        let answer = await request("tools/call", params, timeout: configuration.timeout, progress: onProgress, tracksProgress: true)
        let result = try answer.get()
        if let type = result["resultType"]?.stringValue, type != "complete" {
            throw MCPCallError(.protocolError, "MCP server '\(name)': tool '\(tool)' asked for more input (resultType \(type)), which Parley does not support")
        }
        let structured = result["structuredContent"]
        guard let content = result["content"]?.arrayValue ?? (structured != nil ? [] : nil) else {
            throw MCPCallError(.protocolError, "MCP server '\(name)': tool '\(tool)' answered without 'content'")
        }
        return MCPToolResult(content: content, structuredContent: structured, isError: result["isError"]?.boolValue ?? false)
    }

    // MARK: - Requests

    /// Sends a request on the current session and waits for its answer, at most `timeout` without an
    /// answer or (with `tracksProgress`) a progress notification. Task cancellation abandons it.
    func request(_ method: String, _ params: [String: JSON], timeout: Duration,
                 progress: (@Sendable () -> Void)? = nil, tracksProgress: Bool = false) async -> Result<JSON, MCPCallError> {
        guard let current = session else { return .failure(unavailable("it is not connected")) }
        let id = nextID
        nextID += 1
        var params = params
        var meta = params["_meta"]?.objectValue ?? [:]
        if tracksProgress { meta["progressToken"] = .integer(id) }
        if current.stateless {
            meta["io.modelcontextprotocol/protocolVersion"] = .string(MCPProtocol.statelessVersion)
            meta["io.modelcontextprotocol/clientCapabilities"] = .object([:])
            meta["io.modelcontextprotocol/clientInfo"] = clientInfo
        }
        if !meta.isEmpty { params["_meta"] = .object(meta) }
        let message = JSONRPC.request(id: id, method: method, params: .object(params))
        let exchangeTimeout = timeout + .seconds(5)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<JSON, MCPCallError>, Never>) in
                var entry = PendingRequest(method: method, session: current.number, continuation: continuation, timeout: timeout,
                                           deadline: .now + timeout, onProgress: progress)
                entry.exchange = Task { await self.transmit(message, id: id, session: current.number, idleTimeout: exchangeTimeout) }
                entry.watchdog = Task { await self.watch(id) }
                pending[id] = entry
            }
        } onCancel: {
            Task { await self.abandon(id, .cancelled) }
        }
    }

    /// Sends a notification on the current session (best effort).
    func notify(_ method: String, _ params: JSON?) async {
        guard let transport = session?.transport else { return }
        try? await transport.send(JSONRPC.notification(method: method, params: params), expecting: nil,
                                  idleTimeout: settings.handshakeTimeout)
    }

    private func transmit(_ message: JSON, id: Int64, session number: Int, idleTimeout: Duration) async {
        var retried = false
        while let transport = session?.transport, session?.number == number, pending[id] != nil {
            do {
                try await transport.send(message, expecting: .integer(id), idleTimeout: idleTimeout)
                return
            } catch .sessionExpired where !retried && message["method"]?.stringValue != "initialize" {
                retried = true
                log("the HTTP session expired; initializing again")
                guard await reinitialize(number) else {
                    finish(id, .failure(unavailable("the session expired and a new one could not be made")))
                    return
                }
            } catch .cancelled {
                return
            } catch .unavailable(let reason) {
                finish(id, .failure(unavailable(reason)))
                await endSession(number, reason: reason)
                return
            } catch {
                finish(id, .failure(MCPCallError(.protocolError, "MCP server '\(name)': \(Self.describe(error))")))
                return
            }
        }
    }

    /// One new handshake for a session the server forgot, shared by every request that found out.
    private func reinitialize(_ number: Int) async -> Bool {
        if let running = reinitializing { return await running.value }
        let task = Task { () -> Bool in
            session?.transport.negotiated(version: nil)
            session?.version = nil
            do throws(MCPCallError) {
                try await handshake(number)
                return true
            } catch {
                log("could not initialize again: \(error.message)")
                return false
            }
        }
        reinitializing = task
        let done = await task.value
        reinitializing = nil
        return done
    }

    /// Fails the request with `.timeout` once its deadline passes (progress moves the deadline).
    private func watch(_ id: Int64) async {
        while let deadline = pending[id]?.deadline {
            if ContinuousClock.now >= deadline {
                await abandon(id, .timeout)
                return
            }
            do { try await Task.sleep(until: deadline) } catch { return }
        }
    }

    /// Gives up a request (timeout or cancellation): its caller gets the error at once, its exchange
    /// is dropped, and the server is told with `notifications/cancelled` (on 2026-07-28 closing the
    /// HTTP answer is the cancellation).
    func abandon(_ id: Int64, _ kind: MCPCallError.Kind) async {
        guard let entry = pending[id] else { return }
        let what = entry.method == "tools/call" ? "the tool call" : entry.method
        let message = kind == .timeout
            ? "MCP server '\(name)': \(what) had no answer or progress within \(Self.seconds(entry.timeout))"
            : "MCP server '\(name)': \(what) was cancelled"
        finish(id, .failure(MCPCallError(kind, message)))
        entry.exchange?.cancel()
        guard entry.method != "initialize", let current = session, current.number == entry.session, !current.stateless else { return }
        let reason = kind == .timeout ? "timed out" : "cancelled by Parley"
        // A task of its own: a timeout runs here on the watchdog's task, which `finish` just cancelled.
        Task { await self.notify("notifications/cancelled", .object(["requestId": .integer(id), "reason": .string(reason)])) }
    }

    func finish(_ id: Int64, _ result: Result<JSON, MCPCallError>) {
        guard let entry = pending.removeValue(forKey: id) else { return }
        entry.watchdog?.cancel()
        entry.continuation.resume(returning: result)
    }

    // MARK: - Incoming

    func handle(_ event: TransportEvent, session number: Int) async {
        guard session?.number == number else { return }
        switch event {
        case .malformed(let what):
            log(what)
        case .closed(let reason):
            log(reason)
            await endSession(number, reason: "the process exited")
        case .message(let message):
            guard let incoming = JSONRPC.Incoming(message) else {
                log("skipped a message that is not JSON-RPC")
                return
            }
            await handle(incoming)
        }
    }

    private func handle(_ incoming: JSONRPC.Incoming) async {
        switch incoming {
        case .response(let id, let result):
            guard let key = Self.requestKey(id) else { return }
            finish(key, result.mapError { error in
                MCPCallError(.rejected(code: error.code), "MCP server '\(name)': \(Self.limited(error.message, settings.maxLoggedCharacters))")
            })
        case .request(let id, let method, _):
            let answer = method == "ping"
                ? JSONRPC.response(id: id, result: .object([:]))
                : JSONRPC.errorResponse(id: id, code: JSONRPC.methodNotFound, message: "Parley does not serve \(method)")
            guard let transport = session?.transport else { return }
            Task { try? await transport.send(answer, expecting: nil, idleTimeout: settings.handshakeTimeout) }
        case .notification(let method, let params):
            switch method {
            case "notifications/progress":
                guard let token = params?["progressToken"].flatMap(Self.requestKey), var entry = pending[token] else { return }
                entry.deadline = .now + entry.timeout
                pending[token] = entry
                entry.onProgress?()
            case "notifications/tools/list_changed":
                Task { await self.scheduleRefresh() }
            case "notifications/message":
                let level = params?["level"]?.stringValue ?? "info"
                let data = params?["data"]
                let text = data?.stringValue ?? data?.text ?? ""
                log("[\(level)] \(Self.limited(text, settings.maxLoggedCharacters))")
            default:
                break
            }
        }
    }

    /// Parley's ids and progress tokens are integers; a server may echo them as numbers or strings.
    static func requestKey(_ value: JSON) -> Int64? {
        switch value {
        case .integer(let number): number
        case .number(let number): number == number.rounded() ? Int64(exactly: number) : nil
        case .string(let text): Int64(text)
        default: nil
        }
    }

    static func limited(_ text: String, _ count: Int) -> String {
        text.count > count ? String(text.prefix(count)) + "…" : text
    }
}
