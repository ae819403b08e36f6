import Foundation

/// The parent half: what Parley makes of one uploaded or imported file. Sniffs the kind, then runs
/// `parley-media-worker` (`MediaWorker`) on it in a bounded pool: `settings.workers` at once,
/// `settings.queue` waiting, `.busy` past that. Each child has rlimits and a wall-clock timeout
/// (SIGKILL, `.timeout`); a crash or a kill by a limit is `.unreadable`, never the server's fault.
/// Up to `settings.spares` children are started ahead and wait for their one file (`SpareWorkers`),
/// so a file does not wait for a process to start; `shutdown` (or the end of the processor) ends them.
///
/// Concurrency: `process` may be called from any task. The blocking work (the sniff read, spawn,
/// pipe reads, waitpid) runs on a thread of its own per running file, resumed through a
/// continuation, so the Swift cooperative pool is never held. A started worker runs to its end or
/// its timeout even if the calling task is cancelled.
///
/// Ownership: the input file stays the caller's. On success the caller owns
/// `ProcessedMedia.workDirectory` (a fresh directory per call, under `settings.scratchDirectory`)
/// and must remove it once the outputs are stored; on failure it is already gone.
public final class MediaProcessor: Sendable {
    public let settings: MediaSettings
    private let slots: WorkerSlots
    private let spares: SpareWorkers

    public init(settings: MediaSettings) {
        self.settings = settings
        slots = WorkerSlots(workers: settings.workers, queue: settings.queue)
        // More spares than workers could never all be in use at once.
        spares = SpareWorkers(count: min(settings.spares, settings.workers), executable: settings.workerExecutable)
        // A worker that dies before reading its request must not take Parley with it (EPIPE instead).
        signal(SIGPIPE, SIG_IGN)
    }

    /// Checks and converts `input` (a file the caller owns), named `filename` by the client (only its
    /// extension counts, and only for text). Throws what is wrong with the file, `.timeout` or `.busy`.
    public func process(_ input: URL, filename: String, mode: MediaMode = .upload)
        async throws(MediaError) -> ProcessedMedia {
        try await slots.acquire()
        defer { slots.release() }
        let (settings, spares) = (settings, spares)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<ProcessedMedia, MediaError>, Never>) in
            Thread.detachNewThread {
                continuation.resume(returning: Result { () throws(MediaError) -> ProcessedMedia in
                    try Self.runBlocking(input, filename: filename, mode: mode, settings: settings, spares: spares)
                })
            }
        }
        return try result.get()
    }

    /// Kills the waiting spares; no new one starts. Files being processed finish (each on its own
    /// worker), later ones start their worker on demand. Idempotent; also done when the processor goes.
    public func shutdown() {
        spares.shutdown()
    }

    /// Spares ready now, and their pids: for tests and the bench.
    public var readySpares: [Int32] { spares.readyPIDs }

    deinit {
        spares.shutdown()
    }

    // MARK: - On the dedicated thread

    private static func runBlocking(_ input: URL, filename: String, mode: MediaMode, settings: MediaSettings,
                                    spares: SpareWorkers) throws(MediaError) -> ProcessedMedia {
        let format = try FileSniffer.sniff(file: input, filename: filename)
        let directory = settings.scratchDirectory.appendingPathComponent("parley-media-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .unreadable("cannot make a work directory in \(settings.scratchDirectory.path)")
        }
        do {
            return try runWorker(MediaRequest(input: input, format: format, mode: mode, outputDirectory: directory,
                                              settings: settings), settings: settings, spares: spares)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    private static func runWorker(_ request: MediaRequest, settings: MediaSettings,
                                  spares: SpareWorkers) throws(MediaError) -> ProcessedMedia {
        guard let body = try? JSONEncoder().encode(request) else { throw .unreadable("cannot encode the worker request") }
        let worker: WorkerProcess
        if let spare = spares.take() {
            worker = spare
        } else {
            worker = try WorkerProcess(executable: settings.workerExecutable)
        }
        let outcome = try worker.run(request: body, timeout: settings.timeout)
        // The next spare starts once this file is done, so it never takes CPU from this one.
        spares.refill()
        if outcome.timedOut { throw .timeout }
        let line = outcome.stdout.split(separator: 0x0A).first.map { Data($0) } ?? Data()
        if outcome.signal == nil, let reply = try? JSONDecoder().decode(MediaReply.self, from: line) {
            if let error = reply.error { throw error }
            if let media = reply.media, outcome.exitCode == 0 { return media }
        }
        let limits = "the worker's limits are \(settings.memoryBytes) bytes of memory and \(request.cpuSeconds) s of CPU"
        if let signal = outcome.signal {
            throw .unreadable("the decoder stopped on signal \(signal) (\(signalName(signal))): a corrupt file, or past its limits (\(limits))")
        }
        throw .unreadable("the decoder failed with status \(outcome.exitCode) and no answer (\(limits))")
    }

    private static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGKILL: "SIGKILL"
        case SIGSEGV: "SIGSEGV, a memory fault"
        case SIGABRT: "SIGABRT"
        case SIGBUS: "SIGBUS"
        case SIGILL, SIGTRAP: "a runtime trap, often memory exhausted"
        case SIGXCPU: "SIGXCPU, CPU time exhausted"
        default: "signal \(signal)"
        }
    }
}
