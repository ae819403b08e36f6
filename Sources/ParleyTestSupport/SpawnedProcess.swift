import Foundation
import ParleyPrimitives
import Synchronization

/// A child process for tests (the `parley` executable, the Python MCP test server), started through
/// Parley's own `ChildSpawn` (posix_spawn; every descriptor past stdio closed in the child).
///
/// Not Foundation's `Process`: on Linux (swift-corelibs-foundation of Swift 6.3.1) its `run()` reads past
/// glibc's directory buffer while listing `/proc/self/fd` (swiftlang/swift-corelibs-foundation#5472) and
/// crashed the test process now and then (SIGSEGV in `Process.run`, seen in a clean-clone `make test`).
public final class SpawnedProcess: Sendable {
    public let processIdentifier: pid_t
    /// The read ends of the child's standard output and standard error (`FileHandle.nullDevice`, at
    /// its end at once, when they went to /dev/null).
    public let standardOutput: FileHandle
    public let standardError: FileHandle
    /// The child's wait status once reaped (`waitpid` may be called only once per child).
    private let reaped = Mutex<Int32?>(nil)

    /// Starts `executable`. `standardInput`, when given, is written to the child's standard input, which is
    /// then closed; otherwise the child reads /dev/null. `captureOutput` false sends stdout and stderr to
    /// /dev/null (a server whose output nobody reads must not block on a full pipe).
    public init(executable: URL, arguments: [String], environment: [String: String], standardInput: Data? = nil,
                captureOutput: Bool = true) throws {
        let pipes = try ChildSpawn.pipes(captureOutput ? 3 : 1)
        let input = pipes[0]
        let output = captureOutput ? pipes[1] : nil
        let errors = captureOutput ? pipes[2] : nil
        defer {
            close(input.read)
            if let output { close(output.write) }
            if let errors { close(errors.write) }
        }
        let pid: pid_t
        do {
            pid = try ChildSpawn.spawn(executable.path, arguments: arguments,
                                       environment: environment.map { "\($0.key)=\($0.value)" },
                                       stdio: [input.read, output?.write, errors?.write])
        } catch {
            close(input.write)
            if let output { close(output.read) }
            if let errors { close(errors.read) }
            throw error
        }
        processIdentifier = pid
        standardOutput = output.map { FileHandle(fileDescriptor: $0.read, closeOnDealloc: true) } ?? .nullDevice
        standardError = errors.map { FileHandle(fileDescriptor: $0.read, closeOnDealloc: true) } ?? .nullDevice
        let writer = FileHandle(fileDescriptor: input.write, closeOnDealloc: true)
        if let standardInput { try writer.write(contentsOf: standardInput) }
        try writer.close()
    }

    /// Whether the child has not exited yet (reaps it when it has).
    public var isRunning: Bool {
        reaped.withLock { status in
            if status != nil { return false }
            var raw: Int32 = 0
            if waitpid(processIdentifier, &raw, WNOHANG) == processIdentifier {
                status = raw
                return false
            }
            return true
        }
    }

    /// Blocks until the child has exited.
    public func waitUntilExit() {
        while isRunning { usleep(2_000) }
    }

    /// The exit code, or the number of the signal that ended the child (as Foundation's `Process` gives
    /// it); -1 while it runs.
    public var terminationStatus: Int32 {
        guard !isRunning, let status = reaped.withLock({ $0 }) else { return -1 }
        return ChildSpawn.signal(ofWaitStatus: status) ?? ChildSpawn.exitCode(ofWaitStatus: status)
    }

    public func send(_ signal: Int32) {
        if isRunning { kill(processIdentifier, signal) }
    }
}
