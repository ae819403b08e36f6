import Foundation

/// Starts a child program with `posix_spawn`, the one way Parley starts processes (media workers,
/// stdio MCP servers). Foundation's `Process` is not used: its `run()` crashed inside the test suite
/// once many threads were alive, and it cannot give the child a clean signal state. The child gets
/// exactly the descriptors, arguments and environment named here, an empty signal mask and SIGPIPE at
/// its default (the server blocks SIGINT/SIGTERM for its `sigwait` and ignores SIGPIPE).
public enum ChildSpawn {
    /// Why a child could not be started: the errno `posix_spawn` returned.
    public struct Failure: Error, Sendable, Equatable {
        public let errno: Int32
    }

    /// Starts `path` with `arguments` (argv[1...]) and `environment` ("NAME=value" entries);
    /// `stdio[0...2]` are the parent's descriptors that become the child's stdin, stdout and stderr,
    /// nil meaning /dev/null. Every other descriptor should be close-on-exec in the parent.
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
}
