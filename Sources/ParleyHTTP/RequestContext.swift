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
    var sawFirstCall = false
    var body: [UInt8] = []
    /// A 413 was queued early; later calls are ignored.
    var rejected = false
    var handlerStarted = false
    var stream: EventStreamWriter?
    private let result = Mutex<HTTPResponse?>(nil)

    init(rawTarget: String) {
        self.rawTarget = rawTarget
    }

    func setResult(_ response: HTTPResponse) {
        result.withLock { $0 = response }
    }

    func takeResult() -> HTTPResponse? {
        result.withLock { value in
            defer { value = nil }
            return value
        }
    }
}
