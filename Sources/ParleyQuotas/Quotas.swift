import Foundation
import ParleyAPI
import ParleyAccounts
import ParleyHTTP
import ParleyStore

/// Module ParleyQuotas: what a caller may spend (rate limits, daily budgets, model access, usage
/// reports). It must never know how a conversation or a reply is made.
///
/// The per-user quotas checked before a reply run starts (send, regenerate, continue): the daily
/// output budget, then messages per minute. The live-reply caps are checked by `Generations` itself.
/// Each refusal is a 429 naming its setting, with `Retry-After` in whole seconds.
package struct Quotas: Sendable {
    let store: Store
    let rate: any MessageRateLimit
    /// Output tokens per user per UTC day; 0: none.
    let dailyOutputTokens: Int
    let now: @Sendable () -> Date

    /// - Parameter rate: where messages per minute are counted (nil: in this process, at the policy's rate).
    package init(store: Store, policy: UsagePolicy, mode: AccountSettings.Mode, rate: (any MessageRateLimit)? = nil,
                 now: @escaping @Sendable () -> Date = Date.init) {
        self.store = store
        self.rate = rate ?? MessageRateLimiter(perMinute: policy.messagesPerMinute(in: mode))
        dailyOutputTokens = policy.dailyOutputTokens
        self.now = now
    }

    /// Lets one reply run of `caller` start, or throws the 429. A message refused for the budget takes
    /// no rate token; one let through the rate limit has spent its token even if the reply is then
    /// refused for another reason (a live-reply cap): a retry loop still cannot run faster than the rate.
    package func admit(_ caller: Caller) throws {
        if dailyOutputTokens > 0 {
            let today = now()
            let used = try store.outputTokens(userID: caller.userID, on: today)
            if used >= dailyOutputTokens {
                let midnight = Self.nextUTCMidnight(after: today)
                let wait = max(1, Int(midnight.timeIntervalSince(today).rounded(.up)))
                throw HTTPError(status: 429, code: "daily_budget_exhausted",
                                message: "Your replies used \(used) of the \(dailyOutputTokens) output tokens allowed per day "
                                    + "(PARLEY_USER_DAILY_OUTPUT_TOKENS); the budget renews at 00:00 UTC.",
                                headers: [HTTPError.Header("Retry-After", String(wait))])
            }
        }
        if let wait = try rate.take(caller.userID) {
            throw HTTPError(status: 429, code: "rate_limited",
                            message: "At most \(rate.perMinute) messages per minute (PARLEY_USER_MESSAGES_PER_MINUTE); "
                                + "try again in \(wait) s.",
                            headers: [HTTPError.Header("Retry-After", String(wait))])
        }
    }

    static func nextUTCMidnight(after date: Date) -> Date {
        let day = (date.timeIntervalSince1970 / 86_400).rounded(.down)
        return Date(timeIntervalSince1970: (day + 1) * 86_400)
    }
}
