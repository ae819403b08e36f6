import ParleyAuth

/// How long a failed sign-in must take so that it does not tell whether the name is an account: as
/// long as a check at the slowest Argon2id cost still stored. A hash keeps the cost it was made with
/// until its owner next signs in, so after a change of `PARLEY_PASSWORD_MEMORY_KIB` an old account
/// can take ten times as long to refuse as the decoy that stands in for an unknown name; padding
/// every failure to the slowest cost hides that, whichever way the cost moved.
///
/// Only enabled accounts' hashes count: a disabled name is checked against the decoy, like an
/// unknown one. A plain value; `PasswordWork` keeps it behind its mutex. The time of a cost is the
/// slowest of its last `samplesPerCost` checks (timed at start, then every real one): it follows the
/// machine's load, and an account's own check rarely outlasts it, which would tell it apart (the
/// price of a slow sample is only a longer wait for a few failures, never more work).
struct SignInPadding {
    /// Checks remembered per cost.
    static let samplesPerCost = 5

    /// The costs of enabled accounts' hashes (and today's, the decoy's), whether or not timed yet.
    private(set) var stored: Set<PasswordCost> = []
    /// The last checks' durations per stored cost, oldest first.
    private var samples: [PasswordCost: [Duration]] = [:]

    /// The store's hashes changed: only the costs still in it count (a retired cost no longer slows
    /// every failure down). What is known of the costs that stay is kept.
    mutating func setStored(_ costs: Set<PasswordCost>) {
        stored = costs
        samples = samples.filter { costs.contains($0.key) }
    }

    /// A check at `cost` took `duration`. A cost not yet known is one a hash in the store has (one
    /// written by `parley user` under another setting, say): it counts from now on.
    mutating func record(_ duration: Duration, for cost: PasswordCost) {
        stored.insert(cost)
        var last = samples[cost] ?? []
        last.append(duration)
        if last.count > Self.samplesPerCost { last.removeFirst(last.count - Self.samplesPerCost) }
        samples[cost] = last
    }

    /// Whether `cost` has been timed yet.
    func isTimed(_ cost: PasswordCost) -> Bool {
        samples[cost] != nil
    }

    /// What every failed sign-in is padded to: the slowest recent check of any stored cost (zero
    /// before any is timed).
    var target: Duration {
        samples.values.compactMap { $0.max() }.max() ?? .zero
    }
}
