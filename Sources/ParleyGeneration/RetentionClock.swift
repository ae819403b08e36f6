/// The time retention reads. Injectable, so a test moves it by hand and proves a reply was (or was
/// not yet) released without sleeping.
public struct RetentionClock: Sendable {
    public let now: @Sendable () -> ContinuousClock.Instant

    public init(now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.now = now
    }

    /// The real, monotonic clock.
    public static let continuous = RetentionClock { ContinuousClock.now }
}
