import Dispatch
import Foundation
import Synchronization

/// Hands freed heap memory back to the system after large releases.
///
/// glibc keeps freed memory in its arenas: after 400 non-reading clients of a 1 MB reply left, the
/// server's RSS stayed where it was (885 MiB, against 78 MiB idle) although every backlog had been
/// freed. `malloc_trim(0)` returns the free pages; it walks every arena, so it runs at most once per
/// `interval`, on its own queue, never on the thread that released the memory.
///
/// Concurrency contract: thread-safe; `released(_:)` never blocks and may be called under any lock.
/// A release during the quiet interval schedules one trim at its end, so the last release of a
/// burst (400 clients leaving at once) is always followed by a trim.
final class MemoryTrimmer: Sendable {
    /// Releases smaller than this do not ask for a trim (malloc keeps small blocks for reuse anyway).
    static let minimumRelease = 1 << 20
    /// At most one trim per this many seconds.
    static let defaultInterval: TimeInterval = 1

    private struct State {
        var lastTrimNanos: UInt64?
        var scheduled = false
    }

    private let interval: TimeInterval
    private let trim: @Sendable () -> Void
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "parley.http.memory-trim")

    /// `trim` defaults to glibc's `malloc_trim(0)` (nothing where it does not exist).
    init(interval: TimeInterval = MemoryTrimmer.defaultInterval, trim: @escaping @Sendable () -> Void = MemoryTrimmer.mallocTrim) {
        self.interval = interval
        self.trim = trim
    }

    /// Notes that `bytes` were freed at once; asks for a trim when they are many.
    func released(_ bytes: Int) {
        guard bytes >= Self.minimumRelease else { return }
        let delay = state.withLock { state -> TimeInterval? in
            guard !state.scheduled else { return nil }
            state.scheduled = true
            guard let last = state.lastTrimNanos else { return 0 }
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - last) / 1e9
            return max(0, interval - elapsed)
        }
        guard let delay else { return }
        queue.asyncAfter(deadline: .now() + delay) { [self] in
            state.withLock { state in
                state.scheduled = false
                state.lastTrimNanos = DispatchTime.now().uptimeNanoseconds
            }
            trim()
        }
    }

    /// glibc's `malloc_trim(0)`, looked up at run time: the Swift Glibc module does not declare it, and
    /// other C libraries (musl) do not have it.
    static let mallocTrim: @Sendable () -> Void = {
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return {} }
        let function = unsafeBitCast(symbol, to: Trim.self)
        return { _ = function(0) }
    }()
}
