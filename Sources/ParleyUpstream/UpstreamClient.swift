/// HTTP client for model servers, built on one libcurl multi handle driven by one dedicated thread.
///
/// Thread-safe: `send` may be called from any task. Transfers are added and cancelled through a
/// command queue that wakes the thread (an eventfd in its epoll set), so cancellation removes the
/// handle and closes the socket within one loop turn. Requests use HTTP/1.1, no signals, TCP keep-alive and no
/// proxy (environment proxies are ignored unless `proxy` is given). Connections are reused between
/// complete transfers. When the client is deinitialised the thread finishes the transfers in flight
/// (their consumers can still read or cancel them) and then ends.
///
/// The ParleyUpstream module moves bytes to and from model servers and is the only module that
/// touches libcurl. It must never know what the bytes mean: no SSE, no JSON, no providers or model
/// ids, nothing of conversations.
public final class UpstreamClient: Sendable {
    private let loop: CurlMultiLoop

    /// - Parameter proxy: an explicit proxy URL, or nil for direct connections.
    public init(proxy: String? = nil) {
        loop = CurlMultiLoop(proxy: proxy)
    }

    deinit {
        loop.stop()
    }

    /// Starts a transfer and returns when the final status line and headers have arrived.
    /// Cancelling the calling task before then aborts the transfer and throws `.cancelled`.
    public func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
        let transfer = CurlTransfer(request: request)
        let loop = self.loop
        transfer.bodyContinuation.onTermination = { [weak loop] termination in
            if case .cancelled = termination {
                transfer.requestCancel()
                loop?.submit(.cancel(transfer))
            }
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<UpstreamResponse, UpstreamError>, Never>) in
                transfer.responseContinuation = continuation
                if !loop.submit(.add(transfer)) {
                    transfer.responseContinuation = nil
                    // Also ends the body stream, whose termination handler holds the transfer.
                    transfer.bodyContinuation.finish(throwing: UpstreamError.cancelled)
                    continuation.resume(returning: .failure(.cancelled))
                }
            }
        } onCancel: {
            transfer.requestCancel()
            loop.submit(.cancel(transfer))
        }
        return try result.get()
    }
}
