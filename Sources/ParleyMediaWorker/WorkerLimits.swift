import Foundation
import ParleyMedia

/// The child's resource limits, applied by the child itself before it opens the input: a decoder
/// that allocates without end, spins, or writes without end is stopped by the kernel, and a crash
/// leaves no core file behind. (posix_spawn cannot set limits, and prlimit after spawn races.)
enum WorkerLimits {
    static func apply(memoryBytes: Int, cpuSeconds: Int, outputMaxBytes: Int) throws(MediaError) {
        // Past RLIMIT_FSIZE a write fails with EFBIG (reported) instead of SIGXFSZ killing silently.
        signal(SIGXFSZ, SIG_IGN)
        try set(RLIMIT_CORE, soft: 0, hard: 0, "core")
        try set(RLIMIT_AS, soft: memoryBytes, hard: memoryBytes, "memory")
        // SIGXCPU at the soft limit, SIGKILL one second later.
        try set(RLIMIT_CPU, soft: cpuSeconds, hard: cpuSeconds + 1, "CPU")
        try set(RLIMIT_FSIZE, soft: outputMaxBytes, hard: outputMaxBytes, "file size")
    }

    private static func set(_ resource: __rlimit_resource, soft: Int, hard: Int, _ name: String) throws(MediaError) {
        var limit = rlimit(rlim_cur: rlim_t(max(0, soft)), rlim_max: rlim_t(max(0, hard)))
        var current = rlimit()
        // Never ask for more than the hard limit the parent already has (unprivileged).
        if getrlimit(__rlimit_resource_t(resource.rawValue), &current) == 0, current.rlim_max != rlim_t.max {
            limit.rlim_max = min(limit.rlim_max, current.rlim_max)
            limit.rlim_cur = min(limit.rlim_cur, limit.rlim_max)
        }
        if setrlimit(__rlimit_resource_t(resource.rawValue), &limit) != 0 {
            throw .unreadable("the media worker cannot set its \(name) limit (errno \(errno))")
        }
    }
}
