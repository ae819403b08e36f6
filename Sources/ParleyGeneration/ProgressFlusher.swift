import Foundation
import ParleyStore

/// The group commit: the text of every live reply that grew, written in one transaction, so a
/// `kill -9` loses at most one `flushInterval` of text and a thousand replies cost one write.
///
/// A value with no state of its own; `Generations` owns the loop (`loop(_:)`) and hands it the live replies.
struct ProgressFlusher: Sendable {
    let recorder: any ReplyRecorder
    let interval: Duration

    /// Writes the text of every generation that grew since its last confirmed write, then confirms it.
    /// A failed write confirms nothing: the next flush writes the same text again.
    func flush(_ generations: some Sequence<Generation>) async {
        var updates: [MessageProgressUpdate] = []
        for generation in generations {
            if let progress = await generation.progress() {
                updates.append(MessageProgressUpdate(generation: generation, state: progress.state,
                                                     bytes: progress.bytes, partsVersion: progress.partsVersion))
            }
        }
        guard !updates.isEmpty else { return }
        do {
            try recorder.recordProgress(updates.map(\.state))
        } catch {
            FileHandle.standardError.write(Data("parley: progress flush failed: \(error)\n".utf8))
            return
        }
        for update in updates {
            await update.generation.confirmProgress(update.bytes, partsVersion: update.partsVersion)
        }
    }

    /// Calls `generations.flush()` every `interval` until cancelled or `generations` is gone.
    func loop(_ generations: Generations) -> Task<Void, Never> {
        let interval = interval
        return Task { [weak generations] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let generations else { return }
                await generations.flush()
            }
        }
    }
}

/// One generation's unconfirmed text, as one flush gathered it.
private struct MessageProgressUpdate {
    let generation: Generation
    let state: MessageProgress
    let bytes: Int
    let partsVersion: Int
}
