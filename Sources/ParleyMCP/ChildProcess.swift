import Foundation
import ParleyPrimitives
import Synchronization

/// A child process with pipes on its stdin, stdout and stderr. Its output is read by two dedicated
/// threads (blocking reads never hold a thread of Swift's cooperative pool); stdin is written on a
/// serial queue. Thread-safe.
final class ChildProcess: Sendable {
    /// Bytes asked of a pipe per read (64 KiB).
    static let readSize = 64 << 10

    let processIdentifier: Int32
    private let stdin: FileHandle
    private let writes = DispatchQueue(label: "parley.mcp.stdin")
    private let exit = ExitState()

    /// Starts `executable` with exactly `environment`. `onLine` gets each stdout line (without its
    /// LF; a line over `maxLineBytes` is cut out and reported as nil); `onEnd` is called once, after
    /// stdout ended and the process exited, with its status and the last `stderrTailBytes` of stderr.
    init(executable: String, arguments: [String], environment: [String: String], maxLineBytes: Int, stderrTailBytes: Int,
         onLine: @escaping @Sendable ([UInt8]?) -> Void,
         onEnd: @escaping @Sendable (_ status: Int32, _ stderrTail: [UInt8]) -> Void) throws(ChildSpawn.Failure) {
        // A child that exits must not take Parley with it through a write to its closed pipe.
        signal(SIGPIPE, SIG_IGN)
        let pipes = try ChildSpawn.pipes(3)
        let (input, output, errors) = (pipes[0], pipes[1], pipes[2])
        let pid: pid_t
        do {
            pid = try ChildSpawn.spawn(executable, arguments: arguments,
                                       environment: environment.map { "\($0.key)=\($0.value)" },
                                       stdio: [input.read, output.write, errors.write])
        } catch {
            for descriptor in [input.read, input.write, output.read, output.write, errors.read, errors.write] {
                close(descriptor)
            }
            throw error
        }
        // The child's ends are its own now: with them closed here, its exit is our end of file.
        close(input.read)
        close(output.write)
        close(errors.write)
        processIdentifier = pid
        stdin = FileHandle(fileDescriptor: input.write, closeOnDealloc: true)
        let stdoutFD = output.read
        let stderrFD = errors.read
        let exit = self.exit
        // One thread reaps the child, whenever it ends (it may close stdout long before).
        Thread.detachNewThread {
            let status = ChildSpawn.reap(pid)
            exit.record(ChildSpawn.signal(ofWaitStatus: status) ?? ChildSpawn.exitCode(ofWaitStatus: status))
        }
        let tail = Mutex<[UInt8]>([])
        let stderrDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            Self.readAll(stderrFD) { bytes in
                tail.withLock { kept in
                    kept += bytes
                    if kept.count > stderrTailBytes { kept.removeFirst(kept.count - stderrTailBytes) }
                }
            }
            close(stderrFD)
            stderrDone.signal()
        }
        Thread.detachNewThread {
            var line: [UInt8] = []
            var overlong = false
            Self.readAll(stdoutFD) { bytes in
                var start = bytes.startIndex
                while let newline = bytes[start...].firstIndex(of: 0x0A) {
                    if !overlong { line += bytes[start..<newline] }
                    if overlong || line.count > maxLineBytes { onLine(nil) } else if !line.isEmpty { onLine(line) }
                    line = []
                    overlong = false
                    start = newline + 1
                }
                if !overlong { line += bytes[start...] }
                if line.count > maxLineBytes { overlong = true; line = [] }
            }
            // stdout closed: the child is done speaking even if it lingers; make sure it goes.
            close(stdoutFD)
            if !exit.hasExited { kill(pid, SIGTERM) }
            let status = exit.waitBlocking()
            _ = stderrDone.wait(timeout: .now() + 1)
            onEnd(status, tail.withLock { $0 })
        }
    }

    /// Writes all of `bytes` to the child's stdin; false when the pipe is closed (the child is gone).
    func write(_ bytes: [UInt8]) async -> Bool {
        let handle = stdin
        return await withCheckedContinuation { continuation in
            writes.async {
                do {
                    try handle.write(contentsOf: bytes)
                    continuation.resume(returning: true)
                } catch {
                    continuation.resume(returning: false)
                }
            }
        }
    }

    /// Closes stdin (a well-behaved server exits), then SIGTERM after `grace`, then SIGKILL after `grace`.
    func stop(grace: Duration) async {
        let handle = stdin
        writes.sync { try? handle.close() }
        if await exit.wait(within: grace) { return }
        kill(processIdentifier, SIGTERM)
        if await exit.wait(within: grace) { return }
        kill(processIdentifier, SIGKILL)
        _ = await exit.wait(within: grace)
    }

    /// Reads `descriptor` until end of file (or an error), handing each piece to `body`.
    private static func readAll(_ descriptor: Int32, _ body: ([UInt8]) -> Void) {
        var buffer = [UInt8](repeating: 0, count: readSize)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, readSize) }
            if count > 0 { body(Array(buffer[0..<count])) } else if count == 0 || errno != EINTR { return }
        }
    }
}

/// Whether the child has exited, with its status; waited on by a thread (blocking) or a task (async).
private final class ExitState: Sendable {
    private let state = Mutex<(status: Int32?, waiters: [CheckedContinuation<Void, Never>])>((nil, []))
    private let signal = DispatchSemaphore(value: 0)

    var hasExited: Bool { state.withLock { $0.status != nil } }

    func record(_ status: Int32) {
        let waiters = state.withLock { state in
            state.status = status
            defer { state.waiters = [] }
            return state.waiters
        }
        signal.signal()
        for waiter in waiters { waiter.resume() }
    }

    /// Blocks the calling (dedicated) thread until the exit; only one thread may wait this way.
    func waitBlocking() -> Int32 {
        signal.wait()
        return state.withLock { $0.status ?? -1 }
    }

    /// True once exited, false when `limit` passed first.
    func wait(within limit: Duration) async -> Bool {
        let timer = Task { [self] in
            try? await Task.sleep(for: limit)
            wakeAll()
        }
        defer { timer.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let exited = state.withLock { state in
                if state.status == nil { state.waiters.append(continuation) }
                return state.status != nil
            }
            if exited { continuation.resume() }
        }
        return hasExited
    }

    private func wakeAll() {
        let waiters = state.withLock { state in
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
