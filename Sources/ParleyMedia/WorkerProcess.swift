import Foundation
import ParleyPrimitives
import Synchronization

/// One started `parley-media-worker` child and the parent's end of the socket that is its stdin
/// and stdout (stderr goes to /dev/null: decoders' warnings are not Parley's log). Spawned on
/// demand or ahead of time as a spare (`SpareWorkers`); either way it takes exactly one request:
/// `run` writes it, reads the reply until end of file or the deadline (SIGKILL past it) and reaps
/// the child. Blocking: `MediaProcessor` calls it on a dedicated thread, never on the Swift pool.
/// A child neither run nor stopped is killed and reaped when the value goes.
final class WorkerProcess: Sendable {
    let pid: pid_t
    private let socket: Int32
    /// Set by the first of `run` and `stop`: the child is reaped (or being reaped) and the socket closed.
    private let ended = Atomic<Bool>(false)
    /// The reply is one short JSON line; past this the child is misbehaving.
    static let maxReplyBytes = 1 << 20

    /// How the child ended and what it printed.
    struct Outcome {
        var waitStatus: Int32
        var stdout: [UInt8]
        var timedOut: Bool

        /// The signal that ended the child, or nil when it exited.
        var signal: Int32? { ChildSpawn.signal(ofWaitStatus: waitStatus) }

        var exitCode: Int32 { ChildSpawn.exitCode(ofWaitStatus: waitStatus) }
    }

    /// Starts `executable` (`parley-media-worker`, no arguments); it waits for its request.
    init(executable: URL) throws(MediaError) {
        // One socket pair is the child's stdin and stdout: created close-on-exec in one call (no
        // other child spawned meanwhile inherits it, so a spare sees end of file if Parley dies),
        // and MSG_NOSIGNAL spares the parent SIGPIPE.
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw .unreadable("cannot start the media worker (socketpair: errno \(errno))")
        }
        let (parent, child) = (ends[0], ends[1])
        defer { close(child) }
        do {
            pid = try Self.spawn(executable, stdio: child)
        } catch {
            close(parent)
            throw error
        }
        socket = parent
    }

    deinit {
        stop()
    }

    /// Sends `request`, waits for the reply and the child's end (`timeout` from now, then SIGKILL).
    /// Call once; a second call, or one after `stop`, is refused without touching any process.
    func run(request: Data, timeout: Duration) throws(MediaError) -> Outcome {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else {
            throw .unreadable("the media worker was already used")
        }
        defer { close(socket) }
        let deadline = ContinuousClock.now + timeout
        // The request is far below a socket's buffer: this send cannot block. A child already gone
        // gives EPIPE, and its exit status says why.
        _ = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        shutdown(socket, Int32(SHUT_WR))
        let (stdout, timedOut) = readUntilEnd(deadline: deadline)
        if timedOut { kill(pid, SIGKILL) }
        return Outcome(waitStatus: reap(), stdout: stdout, timedOut: timedOut)
    }

    /// Kills and reaps the child unused (a spare no longer wanted); nothing once it ran or stopped.
    func stop() {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        kill(pid, SIGKILL)
        _ = reap()
        close(socket)
    }

    /// True when a waiting child is gone or broken: it never writes before its request, so anything
    /// readable on the socket, end of file included, means it ended. (Never reaps: `stop` does.)
    var hasEnded: Bool {
        var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) > 0
    }

    private func reap() -> Int32 {
        ChildSpawn.reap(pid)
    }

    private static func spawn(_ executable: URL, stdio: Int32) throws(MediaError) -> pid_t {
        // Only what the child needs: the server's secrets stay out of a decoder's environment.
        // Two malloc arenas keep the address space (RLIMIT_AS) for the decoders, not for reserves.
        var environment = ["MALLOC_ARENA_MAX=2"]
        if let libraries = ProcessInfo.processInfo.environment["LD_LIBRARY_PATH"] {
            environment.append("LD_LIBRARY_PATH=\(libraries)")
        }
        do {
            // stderr to /dev/null: decoders' warnings are not Parley's log.
            return try ChildSpawn.spawn(executable.path, arguments: [], environment: environment,
                                        stdio: [stdio, stdio, nil])
        } catch {
            throw .unreadable("cannot start the media worker \(executable.path) (errno \(error.errno))")
        }
    }

    /// Reads the socket until end of file; true as the second value when the deadline came first.
    private func readUntilEnd(deadline: ContinuousClock.Instant) -> ([UInt8], Bool) {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { return (bytes, true) }
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: max(1, left.milliseconds)))
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { continue }
            let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
            if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) { return (bytes, false) }
            if count > 0, bytes.count < Self.maxReplyBytes { bytes += buffer[0..<count] }
        }
    }
}
