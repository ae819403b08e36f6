import ParleyHTTP
import Synchronization

/// One admitted stream's or export's slot in `OpenStreams`. The response body's closure holds it;
/// the slot is released exactly once: by `release()`, when the started stream's writer closes
/// (`attach`), or when the ticket is deinitialised (the body was never started, or was freed).
///
/// Concurrency contract: thread-safe; `release` may race with itself and with `deinit`'s: an atomic
/// flag lets exactly one through.
package final class StreamTicket: Sendable {
    private let id: Int
    private let streams: OpenStreams
    private let released = Atomic(false)

    init(id: Int, streams: OpenStreams) {
        self.id = id
        self.streams = streams
    }

    deinit {
        release()
    }

    /// Ties the slot to the stream's writer: released when it closes, and the writer finished when the
    /// credential ends. The writer's close handler keeps the ticket alive until then.
    package func attach(_ writer: EventStreamWriter) {
        streams.attach(id, writer)
        writer.onClose { [self] in release() }
    }

    /// True once the credential the slot was opened with has ended (an export then stops).
    package var isRevoked: Bool { streams.isRevoked(id) }

    /// Frees the slot; later calls do nothing.
    package func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        streams.release(id)
    }
}
