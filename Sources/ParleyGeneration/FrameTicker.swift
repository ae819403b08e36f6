import Dispatch
import Foundation

/// Something the `FrameTicker` wakes: a reply's frame timer, or the expiry of retained replies.
protocol TickerTarget: AnyObject, Sendable {
    /// The time asked for in `FrameTicker.schedule` has passed (it may be up to `FrameTicker.slack` early).
    func tick() async
}

/// Fires the frame timers of every live reply from one thread, in batches (and, rarely, the expiry of
/// finished replies kept for replay: `RetainedReplies`).
///
/// Why: with the default 25 ms frames each streaming reply needs a timer forty times a second; one
/// sleeping task per timer made a thousand replies create and schedule 40,000 tasks and dispatch
/// timers a second. Here a reply's timer is one entry in a list, and the replies due together are
/// woken by a few tasks.
final class FrameTicker: @unchecked Sendable {
    private struct Entry {
        let due: DispatchTime
        let target: any TickerTarget
    }

    /// How late a timer may fire so that timers due close together share one wake-up.
    static let slack: DispatchTimeInterval = .microseconds(500)
    /// Replies woken by one task.
    static let group = 16

    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var entries: [Entry] = []
    private var stopped = false

    init() {
        let thread = Thread { [self] in run() }
        thread.name = "parley-frames"
        thread.start()
    }

    /// Calls `target.tick()` once `delay` has passed.
    func schedule(_ target: any TickerTarget, after delay: Duration) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        condition.lock()
        entries.append(Entry(due: .now() + .nanoseconds(nanoseconds), target: target))
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread (timers not yet fired never fire).
    func stop() {
        condition.lock()
        stopped = true
        entries.removeAll()
        condition.signal()
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while !stopped {
            guard let earliest = entries.lazy.map(\.due).min() else {
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
            entries.removeAll { entry in
                guard entry.due <= horizon else { return false }
                due.append(entry.target)
                return true
            }
            condition.unlock()
            // A task per group, not per reply, nor one for all: a thousand due replies still run on
            // every core, and the last does not wait for the 999 before it.
            for start in stride(from: 0, to: due.count, by: Self.group) {
                let batch = due[start..<min(due.count, start + Self.group)]
                Task {
                    for target in batch { await target.tick() }
                }
            }
            condition.lock()
        }
        condition.unlock()
    }
}
