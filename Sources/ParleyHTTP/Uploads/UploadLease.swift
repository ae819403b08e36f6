import Foundation
import Synchronization

/// One upload's claim on the server: a slot of `UploadSlots` and its temp file. `end()` deletes the
/// file and gives the slot back, once, whoever calls it first: the receiver when the upload fails or
/// the client leaves, the handler's task once the handler has returned.
///
/// Thread-safe: it is handed from the HTTP worker thread to the handler's task.
final class UploadLease: Sendable {
    let file: URL
    private let slots: UploadSlots
    private let ended = Atomic(false)

    init(file: URL, slots: UploadSlots) {
        self.file = file
        self.slots = slots
    }

    deinit {
        end()
    }

    func end() {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        unlink(file.path)
        slots.release()
    }
}
