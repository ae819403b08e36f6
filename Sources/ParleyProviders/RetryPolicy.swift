/// When a model call is retried: at most `maxRetries` times, only before the first body byte, only
/// on connection failure, 429 and 502/503/504. After that the error is reported as it came.
public struct RetryPolicy: Sendable, Equatable {
    /// Extra attempts after the first (2).
    public var maxRetries: Int
    /// A 429 `Retry-After` up to this long is waited for; a longer one is reported at once (10 s).
    public var maxRetryAfter: Duration
    /// Wait before a retry when the upstream gave no `Retry-After`; doubled on each retry.
    public var backoff: Duration

    public init(maxRetries: Int = 2, maxRetryAfter: Duration = .seconds(10), backoff: Duration = .milliseconds(250)) {
        self.maxRetries = maxRetries
        self.maxRetryAfter = maxRetryAfter
        self.backoff = backoff
    }

    static func isRetryable(status: Int) -> Bool {
        status == 429 || status == 502 || status == 503 || status == 504
    }
}
