import Dispatch
import Foundation

/// Something the `FrameTicker` wakes: a reply's frame timer, or the expiry of retained replies.
protocol TickerTarget: AnyObject, Sendable {
    /// The time asked for in `FrameTicker.schedule` has passed (it may be up to `FrameTicker.slack` early).
    /// Called on the ticker's thread: it only hands the tick on (resumes what waits for it).
    func timeUp()
}

/// Fires the frame timers of every live reply from one thread, in batches (and, rarely, the expiry of
/// finished replies kept for replay: `RetainedReplies`).
///
/// Why: with the default 25 ms frames each streaming reply needs a timer forty times a second; one
/// sleeping task per timer made a thousand replies create and schedule 40,000 tasks and dispatch
/// timers a second. Here a reply's timer is one entry in a list; the thread resumes each due reply's
/// waiting frame loop directly (`Generation.timeUp`), one hop onto the reply's actor, no task made.
final class FrameTicker: @unchecked Sendable {
    private struct Entry {
        let due: DispatchTime
        let target: any TickerTarget
    }

    /// How late a timer may fire so that timers due close together share one wake-up.
    static let slack: DispatchTimeInterval = .microseconds(500)

    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var entries: [Entry] = []
    /// The earliest `due` of `entries` (nil when empty), guarded by `condition`: kept so that a wake-up
    /// does not walk the list twice, and a timer due after it does not wake the thread at all.
    private var earliest: DispatchTime?
    private var stopped = false

    init() {
        let thread = Thread { [self] in run() }
        thread.name = "parley-frames"
        thread.start()
    }

    /// Calls `target.timeUp()` once `delay` has passed.
    func schedule(_ target: any TickerTarget, after delay: Duration) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        let due = DispatchTime.now() + .nanoseconds(nanoseconds)
        condition.lock()
        entries.append(Entry(due: due, target: target))
        if earliest.map({ due < $0 }) ?? true {
            earliest = due
            condition.signal()
        }
        condition.unlock()
    }

    /// Ends the thread (timers not yet fired never fire).
    func stop() {
        condition.lock()
        stopped = true
        entries.removeAll()
        earliest = nil
        condition.signal()
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while !stopped {
            guard let earliest else {
                condition.wait()
                continue
            }
            let now = DispatchTime.now()
            if earliest > now {
                let wait = Double(earliest.uptimeNanoseconds - now.uptimeNanoseconds) / 1e9
                _ = condition.wait(until: Date(timeIntervalSinceNow: wait))
                continue
            }
            let horizon = now + Self.slack
            var due: [any TickerTarget] = []
            var next: DispatchTime?
            entries.removeAll { entry in
                guard entry.due <= horizon else {
                    next = next.map { min($0, entry.due) } ?? entry.due
                    return false
                }
                due.append(entry.target)
                return true
            }
            self.earliest = next
            condition.unlock()
            // Each reply's actor runs its own tick: a thousand due replies still run on every core,
            // and the last does not wait for the 999 before it.
            for target in due { target.timeUp() }
            condition.lock()
        }
        condition.unlock()
    }
}
