import Foundation
import ParleyPrimitives
import ParleySSE
import ParleyUpstream
import Synchronization

/// MCP's Streamable HTTP transport over `UpstreamClient` (libcurl): each message is a POST whose answer
/// is JSON or an SSE stream (notifications first, then the response). Keeps the `Mcp-Session-Id` the
/// `initialize` answer gave and the negotiated version, both sent on every later request.
/// Thread-safe: sends may run concurrently; the session state is behind a mutex.
final class HTTPTransport: MCPTransport {
    /// Longest error body read to explain a refused request (64 KiB).
    static let maxErrorBodyBytes = 64 << 10

    private let url: String
    /// Configured headers; values may be secrets and never appear in errors.
    private let headers: [(String, String)]
    private let client: UpstreamClient
    private let limits: MCPSettings
    private let session = Mutex<(id: String?, version: String?)>((nil, nil))
    private let events = Mutex<AsyncStream<TransportEvent>.Continuation?>(nil)

    init(url: String, headers: [String: String], client: UpstreamClient, settings: MCPSettings) {
        self.url = url
        self.headers = headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        self.client = client
        self.limits = settings
    }

    var supportsStatelessProtocol: Bool { true }

    func open(events: AsyncStream<TransportEvent>.Continuation) async throws(TransportFailure) {
        self.events.withLock { $0 = events }
    }

    func negotiated(version: String?) {
        session.withLock { state in
            state.version = version
            if version == nil { state.id = nil }
        }
    }

    func send(_ message: JSON, expecting id: JSON?, idleTimeout: Duration) async throws(TransportFailure) {
        let (sessionID, version) = session.withLock { ($0.id, $0.version) }
        let method = message["method"]?.stringValue
        var requestHeaders = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")]
        requestHeaders += headers
        if let version {
            requestHeaders.append(("MCP-Protocol-Version", version))
            if MCPProtocol.isStateless(version), let method {
                requestHeaders.append(("Mcp-Method", method))
                if method == "tools/call", let name = message["params"]?["name"]?.stringValue {
                    requestHeaders.append(("Mcp-Name", MCPProtocol.headerValue(name)))
                }
            }
        }
        if let sessionID { requestHeaders.append(("Mcp-Session-Id", sessionID)) }
        let request = UpstreamRequest(url: url, method: "POST", headers: requestHeaders, body: Array(message.text.utf8),
                                      connectTimeout: limits.connectTimeout, idleTimeout: idleTimeout,
                                      maxResponseBytes: limits.maxExchangeBytes)
        let response: UpstreamResponse
        do throws(UpstreamError) {
            response = try await client.send(request)
        } catch {
            throw Self.failure(error)
        }
        if method == "initialize", let newID = response.headers["mcp-session-id"] {
            session.withLock { $0.id = newID }
        }
        switch response.status {
        case 200..<300 where response.status != 202 && response.status != 204:
            break
        case 202, 204:
            _ = try await read(response.body, limit: Self.maxErrorBodyBytes)
            if id != nil { throw .protocolError("the server accepted a request without answering it (HTTP \(response.status))") }
            return
        case 404 where sessionID != nil:
            throw .sessionExpired
        default:
            let body = (try? await read(response.body, limit: Self.maxErrorBodyBytes)) ?? []
            let detail = String(decoding: body.prefix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw .rejected("HTTP \(response.status)" + (detail.isEmpty ? "" : ": \(detail)"))
        }
        let type = response.headers["content-type"]?.lowercased() ?? ""
        let continuation = events.withLock { $0 }
        if type.hasPrefix("text/event-stream") {
            try await readEventStream(response.body, expecting: id, into: continuation)
            return
        }
        let body = try await read(response.body, limit: limits.maxMessageBytes)
        guard let messages = JSONRPC.messages(in: body) else { throw .protocolError("the answer is not JSON") }
        var answered = false
        for message in messages {
            if let id, message["id"] == id, message["method"] == nil { answered = true }
            continuation?.yield(.message(message))
        }
        if id != nil && !answered { throw .protocolError("the answer holds no response to the request") }
    }

    /// Yields each event's message until the response to `id` (or the end of the stream).
    private func readEventStream(_ body: AsyncThrowingStream<[UInt8], Error>, expecting id: JSON?,
                                 into continuation: AsyncStream<TransportEvent>.Continuation?) async throws(TransportFailure) {
        var decoder = SSEDecoder(maxLineBytes: limits.maxMessageBytes, maxEventBytes: limits.maxMessageBytes)
        do {
            for try await piece in body {
                for event in try decoder.decode(piece) where !event.data.isEmpty {
                    guard let message = JSON(parsing: event.data) else { throw TransportFailure.protocolError("an event is not JSON") }
                    continuation?.yield(.message(message))
                    if let id, message["id"] == id, message["method"] == nil { return }
                }
            }
        } catch let failure as TransportFailure {
            throw failure
        } catch let error as SSEError {
            throw .protocolError("malformed event stream (\(error))")
        } catch let error as UpstreamError {
            throw Self.failure(error)
        } catch {
            throw .protocolError("\(error)")
        }
        if Task.isCancelled { throw .cancelled }
        if id != nil { throw .protocolError("the event stream ended without the response") }
    }

    private func read(_ body: AsyncThrowingStream<[UInt8], Error>, limit: Int) async throws(TransportFailure) -> [UInt8] {
        var bytes: [UInt8] = []
        do {
            for try await piece in body {
                bytes += piece
                if bytes.count > limit { throw TransportFailure.protocolError("a message is larger than \(limit) bytes") }
            }
        } catch let failure as TransportFailure {
            throw failure
        } catch let error as UpstreamError {
            throw Self.failure(error)
        } catch {
            throw .protocolError("\(error)")
        }
        if Task.isCancelled { throw .cancelled }
        return bytes
    }

    private static func failure(_ error: UpstreamError) -> TransportFailure {
        switch error {
        case .cancelled: .cancelled
        case .connectionFailed(let message): .unavailable("could not reach the server: \(message)")
        case .idleTimeout: .unavailable("the server sent nothing for too long")
        case .responseTooLarge: .protocolError("the answer exceeded the size limit")
        case .other(let message): .unavailable("the request failed: \(message)")
        }
    }

    /// Ends the session with a DELETE carrying its id (best effort: a server may answer 405).
    func close() async {
        let sessionID = session.withLock { $0.id }
        events.withLock { $0?.finish() }
        guard let sessionID else { return }
        let request = UpstreamRequest(url: url, method: "DELETE", headers: headers + [("Mcp-Session-Id", sessionID)],
                                      connectTimeout: limits.sessionEndTimeout, idleTimeout: limits.sessionEndTimeout,
                                      maxResponseBytes: Self.maxErrorBodyBytes)
        guard let response = try? await client.send(request) else { return }
        do {
            for try await _ in response.body {}
        } catch {}
    }
}
