import CMicroHTTPD
import Foundation

// MARK: - C callbacks (libmicrohttpd calls these on its worker threads)

/// MHD_OPTION_URI_LOG_CALLBACK: the first sight of a request; its return value becomes `*req_cls`.
/// The raw target is kept because MHD's own decoding would turn `%2f` into a path separator.
func uriLogged(
    _ cls: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?, _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    let target = uri.map { String(cString: $0) } ?? "/"
    if let cls, let connection, let entry = connectionEntry(connection) {
        Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().connections
            .requestStarted(entry, now: DispatchTime.now().uptimeNanoseconds)
    }
    return Unmanaged.passRetained(RequestContext(rawTarget: target)).toOpaque()
}

/// The accept policy: every connection is welcome until shutdown starts, as long as its address holds
/// less than its share of connections.
func acceptPolicy(
    _ cls: UnsafeMutableRawPointer?, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t
) -> MHD_Result {
    guard let cls, let address else { return MHD_Result.NO }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    if core.refusingConnections.load(ordering: .relaxed) { return MHD_Result.NO }
    return core.connections.admits(SocketAddress.numericHost(address)) ? MHD_Result.YES : MHD_Result.NO
}

/// MHD_OPTION_NOTIFY_CONNECTION: a connection was added or is about to be closed (its socket is still
/// open then). Its registry entry lives in the socket context in between.
func connectionNotified(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ code: MHD_ConnectionNotificationCode
) {
    guard let cls, let socketContext else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    switch code {
    case MHD_ConnectionNotificationCode.CONNECTION_NOTIFY_STARTED:
        guard let connection else { return }
        let address = parley_mhd_client_address(connection).map(SocketAddress.numericHost) ?? ""
        let entry = core.connections.opened(
            address: address, socket: parley_mhd_connection_fd(connection), now: DispatchTime.now().uptimeNanoseconds)
        socketContext.pointee = Unmanaged.passRetained(entry).toOpaque()
    default:
        guard let pointer = socketContext.pointee else { return }
        socketContext.pointee = nil
        core.connections.closed(Unmanaged<ConnectionRegistry.Entry>.fromOpaque(pointer).takeRetainedValue())
    }
}

func connectionEntry(_ connection: OpaquePointer) -> ConnectionRegistry.Entry? {
    parley_mhd_socket_context(connection).map {
        Unmanaged<ConnectionRegistry.Entry>.fromOpaque($0).takeUnretainedValue()
    }
}

func accessHandler(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?, _ requestClass: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let method, let uploadDataSize, let contextPointer = requestClass?.pointee
    else { return MHD_Result.NO }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let context = Unmanaged<RequestContext>.fromOpaque(contextPointer).takeUnretainedValue()
    if context.httpVersion.isEmpty, let version { context.httpVersion = String(cString: version) }
    return core.handle(
        connection: connection, context: context, method: String(cString: method),
        uploadData: uploadData, uploadDataSize: uploadDataSize)
}

/// MHD_OPTION_NOTIFY_COMPLETED: the only reliable sign that a request (and maybe its client) is gone.
func requestCompleted(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ requestClass: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ reason: MHD_RequestTerminationCode
) {
    guard let requestClass, let pointer = requestClass.pointee else { return }
    requestClass.pointee = nil
    let context = Unmanaged<RequestContext>.fromOpaque(pointer).takeRetainedValue()
    context.stream?.connectionEnded()
    // A client that left mid-upload: its temp file and slot go now.
    if case .receivingUpload(let receiver) = context.phase { receiver.abandon() }
    guard let cls else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    if context.isResponding { core.endResponse() }
    if let connection, let entry = connectionEntry(connection) {
        core.connections.requestCompleted(entry, now: DispatchTime.now().uptimeNanoseconds)
    }
}

private func streamRead(
    _ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ maximum: Int
) -> Int {
    guard let cls, let buffer else { return EventStreamWriter.endWithError }
    return Unmanaged<EventStreamWriter>.fromOpaque(cls).takeUnretainedValue().read(into: buffer, maximum: maximum)
}

private func streamFreed(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    let stream = Unmanaged<EventStreamWriter>.fromOpaque(cls).takeRetainedValue()
    stream.connectionEnded()
}

private func collectHeader(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?,
    _ value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let cls, let key else { return MHD_Result.YES }
    let headers = Unmanaged<HeaderCollector>.fromOpaque(cls).takeUnretainedValue()
    headers.add(String(cString: key), value.map { String(cString: $0) } ?? "")
    return MHD_Result.YES
}

private final class HeaderCollector {
    var fields: [HeaderField] = []
    func add(_ name: String, _ value: String) {
        fields.append(HeaderField(name: name, value: value))
    }
}

// MARK: - Request handling

extension ServerCore {
    /// One call of the access handler. The first call only looks at headers (queueing there would make
    /// 0.9.75 close keep-alive connections, so only refusals are queued there, and they close it); body
    /// pieces accumulate; the final call routes.
    func handle(
        connection: OpaquePointer, context: RequestContext, method: String,
        uploadData: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>
    ) -> MHD_Result {
        let pieceSize = uploadDataSize.pointee
        uploadDataSize.pointee = 0
        switch context.phase {
        case .awaitingHeaders:
            if let entry = connectionEntry(connection) { connections.headersReceived(entry) }
            context.headers = headerFields(of: connection)
            let upload = router.uploadMethods.contains(method) || router.largeBodyMethods.contains(method)
                ? uploadRoute(for: context, method: method) : nil
            if case .handler(.largeBody(_, let maxBytes), _)? = context.match { context.bodyLimit = maxBytes }
            let bodyLimit = upload == nil ? context.bodyLimit ?? configuration.maxBodyBytes : nil
            if let refusal = firstLook(method: method, headers: context.headers, bodyLimit: bodyLimit) {
                context.phase = .refused
                return queue(Self.closing(refusal.response), on: connection, context: context)
            }
            if let upload {
                return beginUpload(upload.route, parameters: upload.parameters, method: method,
                                   connection: connection, context: context)
            }
            context.phase = .readingBody
            return MHD_Result.YES
        case .readingBody where pieceSize > 0:
            guard context.body.count + pieceSize <= context.bodyLimit ?? configuration.maxBodyBytes else {
                // Only a body without Content-Length gets here. 0.9.75 refuses a response queued
                // mid-body, so the rest is read and dropped and 413 answered at its end.
                context.body = []
                context.phase = .discardingBody(pieceSize)
                return MHD_Result.YES
            }
            if let uploadData {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: pieceSize) { bytes in
                    context.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: pieceSize))
                }
            }
            return MHD_Result.YES
        case .readingBody:
            context.phase = .routed
            return route(connection: connection, context: context, method: method)
        case .discardingBody(let dropped) where pieceSize > 0:
            // Past the discard limit the connection is closed: nobody is owed an unbounded read.
            guard dropped + pieceSize <= configuration.discardLimit else { return MHD_Result.NO }
            context.phase = .discardingBody(dropped + pieceSize)
            return MHD_Result.YES
        case .discardingBody:
            context.phase = .refused
            return queue(Self.closing(HTTPError.payloadTooLarge.response), on: connection, context: context)
        case .receivingUpload(let receiver) where pieceSize > 0:
            // Past the discard limit the connection is closed, as for any other body.
            guard let uploadData, receiver.receive(uploadData, count: pieceSize) else { return MHD_Result.NO }
            return MHD_Result.YES
        case .receivingUpload(let receiver):
            return finishUpload(receiver, connection: connection, context: context)
        case .refused:
            return MHD_Result.YES
        case .routed:
            guard let response = context.takeResult() else { return MHD_Result.YES }
            return queue(response, on: connection, context: context)
        }
    }

    /// What is refused before any body byte is read: unsafe framing, a host or origin this server does
    /// not serve, a declared body over `bodyLimit` (nil for upload routes, which check their own).
    private func firstLook(method: String, headers: [HeaderField], bodyLimit: Int?) -> HTTPError? {
        if let problem = RequestFraming.problem(in: headers) { return problem }
        func value(_ key: String) -> String? {
            headers.first { $0.key == key }?.value
        }
        if let problem = configuration.originPolicy.problem(
            method: method, host: value("host"), origin: value("origin"),
            authorized: value("authorization")?.lowercased().hasPrefix("bearer ") == true) {
            return problem
        }
        if let bodyLimit, let declared = value("content-length"), let length = Int(declared), length > bodyLimit {
            return .payloadTooLarge
        }
        return nil
    }

    /// A refusal also ends the connection: whatever the client sent after it is never read as a request.
    static func closing(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.append(("Connection", "close"))
        return response
    }

    private func route(connection: OpaquePointer, context: RequestContext, method: String) -> MHD_Result {
        let target = context.target ?? RequestTarget(raw: context.rawTarget)
        if target.isMalformed {
            return queue(HTTPError.badRequest("Malformed URL.").response, on: connection, context: context)
        }
        var request = context.makeRequest(method: method, target: target, remoteAddress: remoteAddress(of: connection))
        context.body = []

        switch context.match ?? router.match(method: request.method, segments: target.segments) {
        case .handler(.immediate(let handler), let parameters):
            request.parameters = parameters
            let response: HTTPResponse
            do {
                response = try handler(request)
            } catch {
                response = Self.errorResponse(error, for: request)
            }
            return queue(response, on: connection, context: context)
        case .handler(.async(let handler), let parameters), .handler(.largeBody(let handler, _), let parameters):
            request.parameters = parameters
            return runSuspended(request, on: connection, context: context, handler)
        case .handler(.upload, _):
            // Upload routes are matched at headers time (`uploadMethods`) and never get here.
            return queue(HTTPError.internal.response, on: connection, context: context)
        case .methodNotAllowed(let allow):
            return queue(HTTPError.methodNotAllowed(allow: allow).response, on: connection, context: context)
        case .noRoute:
            if target.segments.first != "api", let staticFiles, let response = staticFiles.response(for: request) {
                return queue(response, on: connection, context: context)
            }
            return queue(HTTPError.notFound.response, on: connection, context: context)
        }
    }

    /// Suspends the connection and runs `handler` on `request` as a task; its response (or the answer to
    /// what it threw) is queued when the connection resumes. 503 when shutting down.
    func runSuspended(
        _ request: HTTPRequest, on connection: OpaquePointer, context: RequestContext, _ handler: @escaping Router.Handler
    ) -> MHD_Result {
        guard beginHandler() else {
            return queue(HTTPError.serviceUnavailable.response, on: connection, context: context)
        }
        MHD_suspend_connection(connection)
        let handle = ConnectionHandle(raw: connection)
        let core = self
        Task {
            let response: HTTPResponse
            do {
                response = try await handler(request)
            } catch {
                response = ServerCore.errorResponse(error, for: request)
            }
            context.setResult(response)
            // Counted before the handler stops counting, so shutdown never sees neither.
            if context.markResponding() { core.beginResponse() }
            MHD_resume_connection(handle.raw)
            core.endHandler()
        }
        return MHD_Result.YES
    }

    /// An `HTTPError`'s own response; anything else is logged and answered 500.
    static func errorResponse(_ error: any Error, for request: HTTPRequest) -> HTTPResponse {
        if let error = error as? HTTPError { return error.response }
        log("handler for \(request.method) \(request.path) failed: \(error)")
        return HTTPError.internal.response
    }

    // MARK: - Responses

    func queue(_ response: HTTPResponse, on connection: OpaquePointer, context: RequestContext) -> MHD_Result {
        var headers: [(String, String)] = [("X-Content-Type-Options", "nosniff")] + configuration.defaultHeaders
        let mhdResponse: OpaquePointer?
        var stream: (EventStreamWriter, @Sendable (EventStreamWriter) -> Void)?
        switch response.body {
        case .bytes(let bytes):
            mhdResponse = bytes.withUnsafeBytes { buffer in
                MHD_create_response_from_buffer(
                    buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
            }
            headers += response.headers
        case .pulled(let next):
            let retained = Unmanaged.passRetained(PulledBody(next)).toOpaque()
            mhdResponse = MHD_create_response_from_callback(UInt64.max, 64 * 1024, pulledRead, retained, pulledFreed)
            if mhdResponse == nil { Unmanaged<PulledBody>.fromOpaque(retained).release() }
            headers += response.headers
        case .sized(let length, let next):
            let retained = Unmanaged.passRetained(PulledBody(next)).toOpaque()
            mhdResponse = MHD_create_response_from_callback(UInt64(max(0, length)), 64 * 1024, pulledRead, retained, pulledFreed)
            if mhdResponse == nil { Unmanaged<PulledBody>.fromOpaque(retained).release() }
            headers += response.headers
        case .eventStream(let start):
            // Only nil after shutdown, when the daemon (and so this thread) has stopped.
            guard let streamSockets else { return MHD_Result.NO }
            let writer = EventStreamWriter(
                connection: StreamConnection(ConnectionHandle(raw: connection)), sockets: streamSockets,
                backlogLimit: configuration.streamBacklogLimit, chunked: context.httpVersion != "HTTP/1.0",
                budget: backlogBudget, trimmer: memoryTrimmer
            ) { [weak self] ended in
                self?.forget(ended)
            }
            let retained = Unmanaged.passRetained(writer).toOpaque()
            // A 4 KiB block, not 16: the body goes to the socket directly (`StreamSocketLoop`), so MHD's
            // buffer only carries the last chunk, and each open stream holds it (10,000 idle streams:
            // 31.3 KiB of RSS each with 16 KiB blocks, 27.4 KiB with 4 KiB).
            mhdResponse = MHD_create_response_from_callback(UInt64.max, 4 * 1024, streamRead, retained, streamFreed)
            if mhdResponse == nil {
                Unmanaged<EventStreamWriter>.fromOpaque(retained).release()
                writer.connectionEnded()  // leaves the backlog budget
            }
            // The handler may make the cache rule stricter (`no-store` for one user's stream); the
            // type and the proxy-buffering header are the stream's own.
            let fixed = ["content-type", "x-accel-buffering"]
            headers += [("Content-Type", "text/event-stream; charset=utf-8"), ("X-Accel-Buffering", "no")]
            if response.header("Cache-Control") == nil { headers.append(("Cache-Control", "no-cache")) }
            headers += response.headers.filter { !fixed.contains($0.0.lowercased()) }
            stream = (writer, start)
        }
        guard let mhdResponse else {
            ServerCore.log("could not create a response")
            return MHD_Result.NO
        }
        for (name, value) in headers {
            _ = MHD_add_response_header(mhdResponse, name, value)
        }
        if let (writer, _) = stream {
            context.stream = writer
        }
        let queued = MHD_queue_response(connection, UInt32(clamping: response.status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        if queued == MHD_Result.YES, context.markResponding() {
            beginResponse()
        }
        if let (writer, start) = stream {
            if queued != MHD_Result.YES {
                writer.connectionEnded()
            } else {
                let open = register(writer)
                start(writer)
                if !open { writer.finish() }
            }
        }
        return queued
    }

    private func headerFields(of connection: OpaquePointer) -> [HeaderField] {
        let collector = HeaderCollector()
        withExtendedLifetime(collector) {
            _ = MHD_get_connection_values(
                connection, MHD_ValueKind.HEADER_KIND, collectHeader, Unmanaged.passUnretained(collector).toOpaque())
        }
        return collector.fields
    }

    func remoteAddress(of connection: OpaquePointer) -> String {
        guard let address = parley_mhd_client_address(connection) else { return "" }
        return SocketAddress.numericHost(address)
    }
}
