/// Where failed sign-ins and password checks are counted (PARLEY_LOGIN_ATTEMPTS per window): in this
/// process (`AttemptLimiter`), or where every node counts them (Redis, with several nodes), so a
/// guesser cannot get the allowance once per node.
package protocol SignInAttempts: Sendable {
    /// Takes one attempt for every key at once: nil when allowed (the attempt now counts), else the
    /// seconds to wait. Throws (an `HTTPError` 503) when attempts cannot be counted: the attempt is
    /// refused, not let through uncounted.
    func begin(_ keys: [String]) throws -> Int?
    /// The attempt succeeded: each key gets it back, and the `clearing` ones forget every failure.
    /// Best effort: a count that cannot be given back only makes the window stricter.
    func succeeded(_ keys: [String], clearing: Set<String>)
}

extension AttemptLimiter: SignInAttempts {
    package func begin(_ keys: [String]) -> Int? {
        begin(keys, now: .now)
    }
}
