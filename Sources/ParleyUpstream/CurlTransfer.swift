import CCurl
import ParleyPrimitives
import Synchronization

/// One request in flight: the curl easy handle, the memory curl points into, and the continuations
/// that deliver the response.
///
/// Confined to the multi thread once submitted, except `requestCancel()` (atomic) which any thread may call.
final class CurlTransfer: @unchecked Sendable {
    let request: UpstreamRequest
    /// Handed to the caller with the response and then released here, so that dropping it is noticed.
    private var bodyStream: AsyncThrowingStream<[UInt8], Error>?
    let bodyContinuation: AsyncThrowingStream<[UInt8], Error>.Continuation
    private let cancelRequested = Atomic<Bool>(false)

    // MARK: - Multi-thread state

    var responseContinuation: CheckedContinuation<Result<UpstreamResponse, UpstreamError>, Never>?
    private(set) var easy: UnsafeMutableRawPointer?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var bodyBuffer: UnsafeMutableBufferPointer<UInt8>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var headers: [String: String] = [:]
    private var received = 0
    private(set) var lastActivity = ContinuousClock.now
    /// Set when a callback aborts the transfer, so completion reports why.
    private var failure: UpstreamError?

    init(request: UpstreamRequest) {
        self.request = request
        let (stream, continuation) = AsyncThrowingStream<[UInt8], Error>.makeStream()
        bodyStream = stream
        bodyContinuation = continuation
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        errorBuffer.deallocate()
    }

    var isCancelRequested: Bool { cancelRequested.load(ordering: .relaxed) }

    func requestCancel() {
        cancelRequested.store(true, ordering: .relaxed)
    }

    var idleDeadline: ContinuousClock.Instant { lastActivity + request.idleTimeout }

    // MARK: - Setup

    /// Creates and configures the easy handle. Returns nil on success.
    func makeHandle(proxy: String?) -> UpstreamError? {
        guard let handle = curl_easy_init() else { return .other("curl_easy_init failed") }
        easy = handle
        let me = Unmanaged.passUnretained(self).toOpaque()
        var ok = true
        func set(_ option: CURLoption, _ value: Int) { ok = ok && parley_curl_setopt_long(handle, option, value) == CURLE_OK }
        func set(_ option: CURLoption, _ value: String) { ok = ok && parley_curl_setopt_string(handle, option, value) == CURLE_OK }

        set(CURLOPT_URL, request.url)
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_TCP_KEEPALIVE, 1)
        set(CURLOPT_TCP_NODELAY, 1)
        set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        set(CURLOPT_PROXY, proxy ?? "")
        set(CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(request.connectTimeout.milliseconds)))
        ok = ok && parley_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer) == CURLE_OK

        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.headers + [("Expect", "")] {
            if (name + value).utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) || name.contains(":") {
                curl_slist_free_all(list)
                return .other("invalid request header")
            }
            let line = value.isEmpty ? "\(name):" : "\(name): \(value)"
            guard let appended = curl_slist_append(list, line) else {
                curl_slist_free_all(list)
                return .other("out of memory")
            }
            list = appended
        }
        headerList = list
        ok = ok && parley_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, list) == CURLE_OK

        switch request.method {
        case "GET" where request.body.isEmpty:
            set(CURLOPT_HTTPGET, 1)
        default:
            if request.method != "POST" { set(CURLOPT_CUSTOMREQUEST, request.method) }
            let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, request.body.count))
            _ = buffer.initialize(from: request.body)
            bodyBuffer = buffer
            set(CURLOPT_POST, 1)
            set(CURLOPT_POSTFIELDSIZE, request.body.count)
            ok = ok && parley_curl_setopt_pointer(handle, CURLOPT_POSTFIELDS, buffer.baseAddress) == CURLE_OK
        }

        ok = ok && parley_curl_setopt_write_callback(handle) { data, size, count, user in
            guard let data, let user else { return 0 }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
            return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
        } == CURLE_OK
        ok = ok && parley_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, me) == CURLE_OK
        ok = ok && parley_curl_setopt_header_callback(handle) { data, size, count, user in
            guard let data, let user else { return 0 }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
            return transfer.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count))
        } == CURLE_OK
        ok = ok && parley_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, me) == CURLE_OK
        lastActivity = .now
        return ok ? nil : .other("could not configure the request (bad URL or option)")
    }

    // MARK: - Callbacks (multi thread)

    private func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Int {
        lastActivity = .now
        if isCancelRequested {
            failure = .cancelled
            return 0
        }
        guard responseContinuation != nil else { return bytes.count }  // trailers after the body started
        var line = String(decoding: bytes, as: UTF8.self)
        while line.hasSuffix("\r\n") || line.hasSuffix("\n") || line.hasSuffix("\r") { line.removeLast() }
        if line.hasPrefix("HTTP/") {
            headers = [:]  // a new response (after a 1xx)
        } else if line.isEmpty {
            let status = responseCode()
            if status >= 200 { deliverResponse(status: status) }
        } else if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].trimmingSpaces.lowercased()
            let value = String(line[line.index(after: colon)...].trimmingSpaces)
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        return bytes.count
    }

    private func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        lastActivity = .now
        if isCancelRequested {
            failure = .cancelled
            return 0
        }
        if responseContinuation != nil { deliverResponse(status: responseCode()) }
        received += bytes.count
        if received > request.maxResponseBytes {
            failure = .responseTooLarge
            return 0
        }
        if case .terminated = bodyContinuation.yield(Array(bytes)) {
            failure = .cancelled
            return 0
        }
        return bytes.count
    }

    private func responseCode() -> Int {
        var code = 0
        if let easy { _ = parley_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code) }
        return code
    }

    private func deliverResponse(status: Int) {
        guard let continuation = responseContinuation, let body = bodyStream else { return }
        responseContinuation = nil
        bodyStream = nil
        continuation.resume(returning: .success(UpstreamResponse(status: status, headers: headers, body: body)))
    }

    // MARK: - Completion (multi thread)

    /// Reports the outcome and frees the handle. The handle must already be out of the multi.
    func complete(code: CURLcode, override: UpstreamError? = nil) {
        var error = override ?? failure
        if error == nil, code != CURLE_OK { error = describe(code) }
        if let error {
            if let continuation = responseContinuation {
                responseContinuation = nil
                continuation.resume(returning: .failure(error))
            }
            bodyContinuation.finish(throwing: error)
            bodyStream = nil
        } else {
            deliverResponse(status: responseCode())
            bodyContinuation.finish()
        }
        release()
    }

    private func describe(_ code: CURLcode) -> UpstreamError {
        let detail = String(cString: errorBuffer)
        let message = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        switch code {
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY,
             CURLE_OPERATION_TIMEDOUT, CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION,
             CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE:
            return .connectionFailed(message)
        default:
            return .other(message)
        }
    }

    private func release() {
        if let easy { curl_easy_cleanup(easy) }
        easy = nil
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        bodyBuffer?.deallocate()
        bodyBuffer = nil
    }
}

private extension Substring {
    var trimmingSpaces: Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }
}
