import CCurl
import Foundation
import Synchronization

/// The thread that owns the curl multi handle. Other threads talk to it only through `submit`
/// (a locked command queue plus `curl_multi_wakeup`, which libcurl documents as thread-safe).
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
    /// Confined to the loop thread.
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]

    init(proxy: String?) {
        _ = Self.globalInit
        self.proxy = proxy
        multi = curl_multi_init()
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
            if let multi { curl_multi_wakeup(multi) }
            return true
        }
    }

    /// Refuses new transfers; the thread ends once the transfers in flight have finished or been cancelled.
    func stop() {
        queue.withLock { queue in
            queue.stopping = true
            if !queue.closed, let multi { curl_multi_wakeup(multi) }
        }
    }

    // MARK: - Loop thread

    private func run() {
        guard let multi else {
            drainAfterStop()
            return
        }
        while true {
            let (commands, stopping) = queue.withLock { queue in
                defer { queue.commands.removeAll() }
                return (queue.commands, queue.stopping)
            }
            for command in commands { handle(command, multi: multi) }
            if stopping, transfers.isEmpty { break }

            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var remaining: Int32 = 0
            while let message = curl_multi_info_read(multi, &remaining) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let code = message.pointee.data.result
                remove(easy, multi: multi)?.complete(code: code)
            }
            let now = ContinuousClock.now
            for (easy, transfer) in transfers where transfer.idleDeadline <= now {
                remove(easy, multi: multi)?.complete(code: CURLE_OK, override: .idleTimeout)
            }
            curl_multi_poll(multi, nil, 0, Int32(pollTimeout(now: .now)), nil)
        }
        drainAfterStop()
        curl_multi_cleanup(multi)
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

    private func pollTimeout(now: ContinuousClock.Instant) -> Int {
        var timeout = Self.maxPollMilliseconds
        for transfer in transfers.values {
            let left = transfer.idleDeadline - now
            let ms = Int(left.components.seconds) * 1000 + Int(left.components.attoseconds / 1_000_000_000_000_000) + 1
            timeout = min(timeout, max(0, ms))
        }
        return timeout
    }
}
