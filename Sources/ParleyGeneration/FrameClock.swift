/// When a reply's next frame goes out: at once when the last one is at least `interval` old,
/// otherwise once, at the end of the interval, however many pieces arrive meanwhile. So a client
/// gets one write per interval however fast the model is. A value type fed with instants: tested
/// without sleeping.
struct FrameClock: Sendable {
    /// What to do with a piece that just arrived.
    enum Decision: Sendable, Equatable {
        /// Send the frame now.
        case emitNow
        /// Arm one timer for this instant, then send.
        case schedule(ContinuousClock.Instant)
        /// A timer is armed already: the piece rides on it.
        case wait
    }

    let interval: Duration
    private var lastFrame: ContinuousClock.Instant?
    private(set) var isScheduled = false

    init(interval: Duration) {
        self.interval = interval
    }

    /// A piece arrived at `now`.
    mutating func pieceArrived(at now: ContinuousClock.Instant) -> Decision {
        guard !isScheduled else { return .wait }
        if let lastFrame, now - lastFrame < interval {
            isScheduled = true
            return .schedule(lastFrame + interval)
        }
        return .emitNow
    }

    /// The armed timer fired.
    mutating func timerFired() {
        isScheduled = false
    }

    /// A frame went out at `now`.
    mutating func emitted(at now: ContinuousClock.Instant) {
        lastFrame = now
    }
}
