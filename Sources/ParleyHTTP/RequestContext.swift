import Synchronization

/// Per-request state handed to libmicrohttpd as `*req_cls` (retained in the URI callback, released in
/// NOTIFY_COMPLETED).
///
/// Thread-safety: the plain `var`s are touched only from the access handler, which MHD calls for one
/// connection on one thread at a time (resume orders the calls); the handler's result crosses from the
/// task to that thread through the mutex.
final class RequestContext: @unchecked Sendable {
    /// Raw request target as sent (`/path?query`), before MHD decodes it.
    let rawTarget: String
    /// The request line's version (`HTTP/1.1`): an event stream's body is chunked unless it is 1.0.
    var httpVersion = ""
    var phase = Phase.awaitingHeaders
    /// The raw header fields, repeats included, read once at the first call.
    var headers: [HeaderField] = []
    var body: [UInt8] = []
    /// The target and route, when they were looked up at headers time (requests whose method has an
    /// upload route or a route with its own body limit); the final call then reuses them.
    var target: RequestTarget?
    var match: Router.Match?
    /// The matched route's own body limit (`Router.Action.largeBody`); nil: the server's.
    var bodyLimit: Int?
    var stream: EventStreamWriter?
    private let result = Mutex<HTTPResponse?>(nil)
    /// A response exists for this request and is not yet sent (counted by the server until
    /// NOTIFY_COMPLETED, so shutdown waits for it). Set from the handler's task or the MHD thread.
    private let responding = Mutex(false)

    /// Where the request is in its life; the access handler moves it forward only.
    enum Phase {
        /// libmicrohttpd has not yet called the handler (headers are being read).
        case awaitingHeaders
        /// The first look passed: body pieces accumulate in `body`.
        case readingBody
        /// The body went past the limit: this many bytes were read and dropped; 413 at its end.
        case discardingBody(Int)
        /// An upload route's body is streaming to its temp file (see `UploadReceiver`).
        case receivingUpload(UploadReceiver)
        /// An error was queued at the first look or after the body; later calls are ignored.
        case refused
        /// The route's handler was started; its response is queued when it arrives.
        case routed
    }

    init(rawTarget: String) {
        self.rawTarget = rawTarget
    }

    /// The request as handlers see it, with the raw header fields folded (repeats joined by `, `).
    func makeRequest(method: String, target: RequestTarget, remoteAddress: String) -> HTTPRequest {
        var folded: [String: String] = [:]
        for field in headers {
            folded[field.key] = folded[field.key].map { $0 + ", " + field.value } ?? field.value
        }
        return HTTPRequest(
            method: method, path: target.path, query: target.query, headers: folded, body: body,
            remoteAddress: remoteAddress)
    }

    func setResult(_ response: HTTPResponse) {
        result.withLock { $0 = response }
    }

    /// Marks the request as responding; true only the first time (the caller then counts it).
    func markResponding() -> Bool {
        responding.withLock { marked in
            defer { marked = true }
            return !marked
        }
    }

    var isResponding: Bool { responding.withLock { $0 } }

    func takeResult() -> HTTPResponse? {
        result.withLock { value in
            defer { value = nil }
            return value
        }
    }
}
