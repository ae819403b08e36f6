/// Where the messages-per-minute allowance (PARLEY_USER_MESSAGES_PER_MINUTE) is counted: in this
/// process (`MessageRateLimiter`), or where every node counts it (Redis, with several nodes), so a
/// user cannot get the rate once per node.
package protocol MessageRateLimit: Sendable {
    /// Messages per minute; also the burst a full allowance lets through.
    var perMinute: Int { get }
    /// Takes one message for `userID`: nil when it may go, otherwise the whole seconds until it may.
    /// Throws (an `HTTPError` 503) when the count cannot be kept: the message is refused, not let
    /// through uncounted.
    func take(_ userID: String) throws -> Int?
}

extension MessageRateLimiter: MessageRateLimit {}
