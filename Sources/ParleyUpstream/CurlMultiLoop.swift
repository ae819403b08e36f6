import CCurl
import Foundation
import Glibc
import ParleyPrimitives
import Synchronization

/// The thread that owns the curl multi handle. Other threads talk to it only through `submit`
/// (a locked command queue plus an eventfd that wakes the loop).
///
/// Event-driven (`curl_multi_socket_action` on an epoll set that libcurl's socket callback keeps):
/// a wakeup costs the sockets that are ready, not every transfer. The earlier `curl_multi_perform`
/// + `curl_multi_poll` loop walked and polled all transfers on every chunk of any of them, which
/// made the relay's CPU per chunk grow with the number of streams.
final class CurlMultiLoop: @unchecked Sendable {
    enum Command: Sendable {
        case add(CurlTransfer)
        case cancel(CurlTransfer)
    }

    /// Longest sleep of the loop when nothing is due: bounds the idle-timeout check granularity.
    static let maxPollMilliseconds = 1000

    private struct Queue {
        var commands: [Command] = []
        var stopping = false
        /// The multi handle is freed (or about to be): nobody may wake it any more.
        var closed = false
    }

    private static let globalInit: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    private let multi: UnsafeMutableRawPointer?
    private let proxy: String?
    private let queue = Mutex(Queue())
    /// The epoll set of libcurl's sockets and `wake`; -1 when it could not be made.
    private let epoll: Int32
    /// Written by `submit` and `stop` to wake the loop (eventfd).
    private let wake: Int32

    // MARK: Confined to the loop thread
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// When libcurl wants `CURL_SOCKET_TIMEOUT` handled (its timer callback), or nil for never.
    private var curlDeadline: ContinuousClock.Instant?
    /// No transfer can reach its idle deadline before this (deadlines only move later), so the
    /// transfers are walked for idle timeouts only then, not on every wakeup.
    private var nextIdleCheck: ContinuousClock.Instant = .now

    init(proxy: String?) {
        _ = Self.globalInit
        self.proxy = proxy
        multi = curl_multi_init()
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wake = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        if epoll >= 0, wake >= 0 {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.fd = wake
            _ = epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &event)
        }
        if let multi {
            let me = Unmanaged.passUnretained(self).toOpaque()
            _ = parley_curl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, me)
            _ = parley_curl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, me)
            _ = parley_curl_multi_setopt_socket_callback(multi) { _, socket, what, context, _ in
                guard let context else { return 0 }
                Unmanaged<CurlMultiLoop>.fromOpaque(context).takeUnretainedValue().watch(socket, what: what)
                return 0
            }
            _ = parley_curl_multi_setopt_timer_callback(multi) { _, milliseconds, context in
                guard let context else { return 0 }
                let loop = Unmanaged<CurlMultiLoop>.fromOpaque(context).takeUnretainedValue()
                loop.curlDeadline = milliseconds < 0 ? nil : .now + .milliseconds(milliseconds)
                return 0
            }
        }
        let thread = Thread { [self] in run() }
        thread.name = "parley-upstream"
        thread.start()
    }

    /// Queues a command for the loop thread. Returns false (and drops an `.add`) once the loop is
    /// stopping; a `.cancel` after the loop ended is dropped too (nothing is left to cancel).
    ///
    /// The wakeup happens under the queue lock: the loop thread frees the multi handle only after
    /// marking the queue closed under that lock, so no thread can wake a freed handle.
    @discardableResult
    func submit(_ command: Command) -> Bool {
        queue.withLock { queue in
            if queue.stopping, case .add = command { return false }
            guard !queue.closed else { return false }
            queue.commands.append(command)
            wakeLoop()
            return true
        }
    }

    /// Refuses new transfers; the thread ends once the transfers in flight have finished or been cancelled.
    func stop() {
        queue.withLock { queue in
            queue.stopping = true
            if !queue.closed { wakeLoop() }
        }
    }

    // MARK: - Loop thread

    private func wakeLoop() {
        var one: UInt64 = 1
        _ = Glibc.write(wake, &one, 8)
    }

    private func run() {
        guard let multi, epoll >= 0, wake >= 0 else {
            drainAfterStop()
            closeDescriptors()
            return
        }
        var ready = [epoll_event](repeating: epoll_event(), count: 256)
        while true {
            let (commands, stopping) = queue.withLock { queue in
                defer { queue.commands.removeAll() }
                return (queue.commands, queue.stopping)
            }
            for command in commands { handle(command, multi: multi) }
            if stopping, transfers.isEmpty { break }

            var running: Int32 = 0
            if let due = curlDeadline, due <= .now {
                curlDeadline = nil
                curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running)
            }
            finishDone(multi)
            let now = ContinuousClock.now
            if nextIdleCheck <= now { checkIdle(now: now, multi: multi) }

            let count = epoll_wait(epoll, &ready, Int32(ready.count), Int32(waitMilliseconds(now: .now)))
            for index in 0..<max(0, Int(count)) {
                let event = ready[index]
                let socket = event.data.fd
                if socket == wake {
                    var value: UInt64 = 0
                    _ = Glibc.read(wake, &value, 8)
                    continue
                }
                var flags: Int32 = 0
                if event.events & EPOLLIN.rawValue != 0 { flags |= CURL_CSELECT_IN }
                if event.events & EPOLLOUT.rawValue != 0 { flags |= CURL_CSELECT_OUT }
                if event.events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { flags |= CURL_CSELECT_ERR }
                curl_multi_socket_action(multi, socket, flags, &running)
            }
            finishDone(multi)
        }
        drainAfterStop()
        curl_multi_cleanup(multi)
        closeDescriptors()
    }

    /// libcurl's socket callback: keeps the epoll set equal to the sockets and directions it wants.
    private func watch(_ socket: curl_socket_t, what: Int32) {
        if what == CURL_POLL_REMOVE {
            _ = epoll_ctl(epoll, EPOLL_CTL_DEL, socket, nil)
            return
        }
        var event = epoll_event()
        if what & CURL_POLL_IN != 0 { event.events |= EPOLLIN.rawValue }
        if what & CURL_POLL_OUT != 0 { event.events |= EPOLLOUT.rawValue }
        event.data.fd = socket
        if epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event) != 0 {
            _ = epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event)
        }
    }

    /// Completes the transfers libcurl reports done.
    private func finishDone(_ multi: UnsafeMutableRawPointer) {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            remove(easy, multi: multi)?.complete(code: code)
        }
    }

    /// Ends the transfers past their idle deadline and sets when to look again: the earliest
    /// deadline left, which later bytes can only push back.
    private func checkIdle(now: ContinuousClock.Instant, multi: UnsafeMutableRawPointer) {
        var next = now + .milliseconds(Self.maxPollMilliseconds)
        for (easy, transfer) in transfers {
            let deadline = transfer.idleDeadline
            if deadline <= now {
                remove(easy, multi: multi)?.complete(code: CURLE_OK, override: .idleTimeout)
            } else {
                next = min(next, deadline)
            }
        }
        nextIdleCheck = next
    }

    private func closeDescriptors() {
        if epoll >= 0 { close(epoll) }
        if wake >= 0 { close(wake) }
    }

    /// Closes the queue (no wakeup may reach the multi handle after this) and fails queued adds.
    private func drainAfterStop() {
        let commands = queue.withLock { queue in
            queue.stopping = true
            queue.closed = true
            defer { queue.commands.removeAll() }
            return queue.commands
        }
        for case .add(let transfer) in commands { transfer.complete(code: CURLE_OK, override: .cancelled) }
        // Cancels queued after the last transfer ended have nothing left to act on.
    }

    private func handle(_ command: Command, multi: UnsafeMutableRawPointer) {
        switch command {
        case .add(let transfer):
            if transfer.isCancelRequested {
                transfer.complete(code: CURLE_OK, override: .cancelled)
                return
            }
            if let error = transfer.makeHandle(proxy: proxy) {
                transfer.complete(code: CURLE_OK, override: error)
                return
            }
            guard let easy = transfer.easy, curl_multi_add_handle(multi, easy) == CURLM_OK else {
                transfer.complete(code: CURLE_OK, override: .other("could not start the transfer"))
                return
            }
            transfers[easy] = transfer
            nextIdleCheck = min(nextIdleCheck, transfer.idleDeadline)
        case .cancel(let transfer):
            // Removing an unfinished transfer makes libcurl close its connection immediately.
            guard let easy = transfer.easy, transfers[easy] === transfer else { return }
            remove(easy, multi: multi)?.complete(code: CURLE_OK, override: .cancelled)
        }
    }

    private func remove(_ easy: UnsafeMutableRawPointer, multi: UnsafeMutableRawPointer) -> CurlTransfer? {
        guard let transfer = transfers.removeValue(forKey: easy) else { return nil }
        curl_multi_remove_handle(multi, easy)
        return transfer
    }

    /// How long epoll may sleep: until libcurl's timer or the next idle check, whichever is first.
    private func waitMilliseconds(now: ContinuousClock.Instant) -> Int {
        var until = nextIdleCheck
        if let curlDeadline { until = min(until, curlDeadline) }
        let left = until - now
        guard left > .zero else { return 0 }
        return min(Self.maxPollMilliseconds, Int(left.milliseconds) + 1)
    }
}
