import Foundation
import Glibc

/// Starts a child program with `posix_spawn`, the one way Parley starts processes (media workers,
/// stdio MCP servers). Foundation's `Process` is not used: its `run()` crashed inside the test suite
/// once many threads were alive, and it cannot give the child a clean signal state. The child gets
/// exactly the descriptors, arguments and environment named here (every other descriptor is closed in
/// it, whether or not it was close-on-exec), an empty signal mask and SIGPIPE at its default (the
/// server blocks SIGINT/SIGTERM for its `sigwait` and ignores SIGPIPE).
public enum ChildSpawn {
    /// Why a child could not be started: the errno `posix_spawn` returned.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let errno: Int32

        public var description: String { String(cString: strerror(errno)) }
    }

    /// Starts `path` with `arguments` (argv[1...]) and `environment` ("NAME=value" entries);
    /// `stdio[0...2]` are the parent's descriptors that become the child's stdin, stdout and stderr,
    /// nil meaning /dev/null.
    public static func spawn(_ path: String, arguments: [String], environment: [String],
                             stdio: [Int32?]) throws(Failure) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, source) in stdio.prefix(3).enumerated() {
            if let source {
                posix_spawn_file_actions_adddup2(&actions, source, Int32(target))
            } else {
                posix_spawn_file_actions_addopen(&actions, Int32(target), "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        guard let closeFrom = addCloseFrom else { throw Failure(errno: ENOSYS) }
        let closing = closeFrom(&actions, 3)
        guard closing == 0 else { throw Failure(errno: closing) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard status == 0 else { throw Failure(errno: status) }
        return pid
    }

    /// `count` pipes as (read, write), every end close-on-exec (a child spawned here between `pipe`
    /// and `fcntl` would not keep them either: it closes every descriptor past its stdio). All or none:
    /// when one cannot be made, those already made are closed.
    public static func pipes(_ count: Int) throws(Failure) -> [(read: Int32, write: Int32)] {
        var made: [(read: Int32, write: Int32)] = []
        for _ in 0..<count {
            var ends: [Int32] = [-1, -1]
            guard Glibc.pipe(&ends) == 0 else {
                let failure = Failure(errno: errno)
                for pipe in made { close(pipe.read); close(pipe.write) }
                throw failure
            }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            made.append((ends[0], ends[1]))
        }
        return made
    }

    /// Waits for `pid` to end (blocking the calling thread) and returns its raw wait status.
    public static func reap(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    /// The signal that ended a child with this wait status, or nil when it exited.
    public static func signal(ofWaitStatus status: Int32) -> Int32? {
        let number = status & 0x7F
        return number != 0 && number != 0x7F ? number : nil
    }

    /// The exit code in a wait status (meaningful when `signal(ofWaitStatus:)` is nil).
    public static func exitCode(ofWaitStatus status: Int32) -> Int32 { (status >> 8) & 0xFF }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34): glibc exports it, Swift's Glibc module
    /// does not declare it.
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()
}
