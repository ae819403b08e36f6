import Foundation
import Glibc
import Synchronization

/// A child process started with `posix_spawn`, for the tests that run the `parley` executable.
///
/// Not Foundation's `Process`: on Linux (swift-corelibs-foundation of Swift 6.3.1) its `run()` reads past
/// glibc's directory buffer while listing `/proc/self/fd` (swiftlang/swift-corelibs-foundation#5472) and
/// crashed the test process now and then (SIGSEGV in `Process.run`, seen in a clean-clone `make test`).
/// Here the child gets standard input, output and error as given and closes every other descriptor
/// (`posix_spawn_file_actions_addclosefrom_np`, glibc 2.34), so no test's sockets leak into it.
final class ChildProcess: Sendable {
    let processIdentifier: pid_t
    /// The read ends of the child's standard output and standard error.
    let standardOutput: FileHandle
    let standardError: FileHandle
    /// The child's wait status once reaped (`waitpid` may be called only once per child).
    private let reaped = Mutex<Int32?>(nil)

    enum SpawnError: Error, CustomStringConvertible {
        case failed(String, Int32)
        var description: String {
            switch self {
            case .failed(let what, let code): return "\(what) failed: \(String(cString: strerror(code)))"
            }
        }
    }

    /// Starts `executable`. `standardInput`, when given, is written to the child's standard input, which is
    /// then closed; otherwise the child reads /dev/null.
    init(executable: URL, arguments: [String], environment: [String: String], standardInput: Data? = nil) throws {
        let output = try Self.pipe()
        let errors = try Self.pipe()
        let input = try Self.pipe()
        defer {
            close(output.write)
            close(errors.write)
            close(input.read)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input.read, 0)
        posix_spawn_file_actions_adddup2(&actions, output.write, 1)
        posix_spawn_file_actions_adddup2(&actions, errors.write, 2)
        guard let closeFrom = Self.addCloseFrom else {
            throw SpawnError.failed("posix_spawn_file_actions_addclosefrom_np (glibc 2.34)", ENOSYS)
        }
        let closing = closeFrom(&actions, 3)
        guard closing == 0 else { throw SpawnError.failed("posix_spawn_file_actions_addclosefrom_np", closing) }

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable.path, &actions, nil, argv, envp)
        guard spawned == 0 else {
            close(output.read)
            close(errors.read)
            close(input.write)
            throw SpawnError.failed("posix_spawn \(executable.path)", spawned)
        }
        processIdentifier = pid
        standardOutput = FileHandle(fileDescriptor: output.read, closeOnDealloc: true)
        standardError = FileHandle(fileDescriptor: errors.read, closeOnDealloc: true)
        let writer = FileHandle(fileDescriptor: input.write, closeOnDealloc: true)
        if let standardInput { try writer.write(contentsOf: standardInput) }
        try writer.close()
    }

    /// Whether the child has not exited yet (reaps it when it has).
    var isRunning: Bool {
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
    func waitUntilExit() {
        while isRunning { usleep(2_000) }
    }

    /// The exit code, or the number of the signal that ended the child (as Foundation's `Process` gives
    /// it); -1 while it runs.
    var terminationStatus: Int32 {
        guard !isRunning, let status = reaped.withLock({ $0 }) else { return -1 }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }

    func send(_ signal: Int32) {
        if isRunning { kill(processIdentifier, signal) }
    }

    private static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard Glibc.pipe(&fds) == 0 else { throw SpawnError.failed("pipe", errno) }
        // Close-on-exec: another test's child must not inherit them (this child closes them anyway).
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc exports it, but Swift's Glibc module does not declare it.
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")
        else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()
}
