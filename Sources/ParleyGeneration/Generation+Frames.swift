/// The frame timer: `FrameTicker` wakes a reply by resuming its frame loop, which waits on the reply's
/// actor, instead of making a task per wake-up.
extension Generation {
    /// Arms the frame timer; the first one starts the frame loop, which waits on this actor for the
    /// ticker's wake-ups until the reply ends.
    func arm(after delay: Duration) {
        if let stream = pendingWakeups {
            pendingWakeups = nil
            Task { await self.frames(stream) }
        }
        ticker.schedule(self, after: delay)
    }

    private func frames(_ stream: AsyncStream<Void>) async {
        var iterator = stream.makeAsyncIterator()
        while await iterator.next(isolation: self) != nil {
            tick()
        }
    }

    /// On the ticker's thread: resumes the frame loop (one hop onto this actor).
    nonisolated func timeUp() {
        wakeups.yield()
    }
}
