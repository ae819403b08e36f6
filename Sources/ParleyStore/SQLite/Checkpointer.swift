import CSQLite
import Foundation

/// Copies the WAL back into the database file on a thread of its own, so that a commit does not run
/// a checkpoint (unless the WAL is past its bound, below).
///
/// Why: with SQLite's automatic checkpoint, the commit that takes the WAL past 1,000 pages runs the
/// checkpoint itself, and a checkpoint calls `fdatasync` twice. The store's writes are made from
/// async code on Swift's cooperative pool (two threads on a two-core machine), so one slow sync on a
/// busy disk (242 ms was measured) stalled every task on that thread. Here the writer connection only
/// reports its WAL's size after each commit (`Database.reportWALSize`, which also turns SQLite's own
/// checkpoint off) and this thread, on its own connection, runs the checkpoints.
///
/// - A `PASSIVE` checkpoint runs once `limits.pages` pages were committed since the last one, and
///   every `limits.interval` when anything was. `PASSIVE` takes no lock a writer or reader waits for:
///   commits go on beside it, and it copies what no reader still needs.
/// - The writer reuses the WAL from its start only when a transaction begins with every page copied,
///   so commits arriving during each copy could keep it growing: the thread catches up at once
///   (`catchUpRounds`). The WAL's bound: a commit that leaves more than `limits.hardPages` pages
///   uncopied runs one `PASSIVE` checkpoint itself (`walGrew` says so; the writer's WAL hook runs it),
///   as SQLite's automatic checkpoint would, once this thread's copy under way (if any) has ended
///   (`writerCheckpoints`). A writer committing without pause can still outrun this (it reuses the WAL
///   only at a moment when every page is copied and no copy is under way): a test loop of 16 KB
///   commits peaked at 7–17 MB of WAL with a 64-page bound; Parley's writes leave it such moments.
///   Nothing waits for a reader: a reader's old snapshot (a long backup) can hold the WAL past the
///   bound until it ends, as it can with SQLite's automatic checkpoint. With `journal_size_limit` on
///   the writer (`Database.reportWALSize`), the file is cut back to `limits.pages` pages at the
///   commit after a reuse, so a quiet store keeps a small `-wal` file.
///
/// Durability does not change: a commit is in the WAL when the write returns, as before (WAL with
/// `synchronous = NORMAL` survives a process crash); a checkpoint only copies committed pages, and one
/// cut short by a crash is redone from the WAL at the next open.
///
/// Concurrency: `@unchecked Sendable` because every mutable field is read and written only with
/// `condition` locked, and `database` is used only by the checkpoint thread (and by `init` before
/// the thread starts).
final class Checkpointer: @unchecked Sendable {
    /// When checkpoints run (see the type's comment).
    struct Limits: Sendable, Equatable {
        /// Pages committed since the last checkpoint that start one at once (SQLite's default
        /// automatic checkpoint: 1,000 pages, 4 MB with 4 KiB pages).
        var pages: Int = 1000
        /// Uncopied pages past which the commit itself checkpoints (16,000 pages, 64 MB with 4 KiB pages).
        var hardPages: Int = 16_000
        /// How often a checkpoint runs when fewer than `pages` were committed since the last.
        var interval: Duration = .seconds(1)
    }

    /// What the checkpoint thread last did, for tests and logs.
    struct Counts: Sendable, Equatable {
        var passive = 0
        /// Checkpoints a commit ran itself (the WAL was past `hardPages`).
        var byWriter = 0
        var failed = 0
    }

    /// `PASSIVE` checkpoints run back to back at most, while commits keep arriving during each.
    static let catchUpRounds = 4

    private let database: SQLiteDatabase
    private let limits: Limits
    private let condition = NSCondition()
    /// The WAL's size in pages as the last commit reported it.
    private var walPages = 0
    /// Of those, how many the last checkpoint copied (pages before it are not counted again).
    private var checkpointedPages = 0
    /// Set by a commit that took the WAL `limits.pages` past `checkpointedPages`.
    private var due = false
    /// The thread is copying (a checkpoint call is under way on its connection).
    private var copying = false
    /// A commit past the bound waits to copy: the thread starts no copy until it has.
    private var writerWaiting = false
    private var stopping = false
    private var running = true
    private var counts = Counts()

    /// Opens the checkpoint connection to `path` and starts the thread.
    init(path: String, busyTimeoutMilliseconds: Int32, limits: Limits) throws(StoreError) {
        database = try SQLiteDatabase(path: path, readOnly: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        self.limits = limits
        let thread = Thread { [self] in run() }
        thread.name = "parley.store.checkpoint"
        thread.start()
    }

    /// Called by the writer connection after each commit (on the writer's thread, inside the commit):
    /// records the WAL's size and wakes the thread when a checkpoint is due. Takes the lock briefly.
    /// Returns true when the WAL is past the bound: the commit then checkpoints itself and reports it
    /// with `writerCheckpointed`.
    func walGrew(toPages pages: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if pages < checkpointedPages { checkpointedPages = 0 }  // the WAL was reused from its start
        walPages = pages
        if pages - checkpointedPages >= limits.pages, !due {
            due = true
            condition.signal()
        }
        return pages - checkpointedPages > limits.hardPages
    }

    /// A commit past the bound (see `walGrew`) copies the WAL itself with `checkpoint` (on the writer's
    /// connection), once the thread's copy under way, if any, has ended: two checkpoints never run at
    /// once (the second would be busy), and the thread starts no other meanwhile.
    func writerCheckpoints(_ checkpoint: () -> (walPages: Int, checkpointedPages: Int)?) {
        condition.lock()
        writerWaiting = true
        while copying { condition.wait() }
        condition.unlock()
        let result = checkpoint()
        condition.lock()
        defer { condition.unlock() }
        writerWaiting = false
        condition.broadcast()
        guard let result else { return }
        counts.byWriter += 1
        if walPages == result.walPages { checkpointedPages = max(checkpointedPages, result.checkpointedPages) }
    }

    /// What has run so far.
    var completed: Counts {
        condition.lock()
        defer { condition.unlock() }
        return counts
    }

    /// Stops the thread after the checkpoint it is running, if any, and waits for it to end. Call
    /// before the writer connection closes; the connection this type opened closes with it.
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        stopping = true
        condition.broadcast()
        while running { condition.wait() }
    }

    // MARK: - The thread

    private func run() {
        while let pages = nextCheckpoint() {
            checkpoint(walPages: pages)
        }
        condition.lock()
        running = false
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until a checkpoint is due (or the interval passed with pages to copy); returns the WAL's
    /// size then, or nil when stopping.
    private func nextCheckpoint() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        while !stopping {
            if due || walPages > checkpointedPages {
                if !due {
                    // Fewer than `limits.pages`: wait out the interval unless more arrive.
                    _ = condition.wait(until: Date().addingTimeInterval(limits.interval.timeInterval))
                    if stopping { return nil }
                }
                due = false
                return walPages
            }
            _ = condition.wait(until: Date().addingTimeInterval(limits.interval.timeInterval))
        }
        return nil
    }

    /// One `PASSIVE` checkpoint on this thread's connection, unless a commit waits to run its own first.
    private func copy() throws(StoreError) -> (walPages: Int, checkpointedPages: Int) {
        condition.lock()
        while writerWaiting { condition.wait() }
        copying = true
        condition.unlock()
        defer {
            condition.lock()
            copying = false
            condition.broadcast()
            condition.unlock()
        }
        return try database.checkpoint()
    }

    private func checkpoint(walPages pages: Int) {
        var outcome = Counts()
        var copied = 0
        do {
            var result = try copy()
            outcome.passive = 1
            // Commits made during the copy keep the WAL from being reused from its start (the writer
            // reuses it only when a transaction begins with every page copied): catch up at once, while
            // each round still copies something (a reader's old snapshot can hold the rest back).
            for _ in 1..<Self.catchUpRounds where result.walPages > result.checkpointedPages {
                let next = try copy()
                outcome.passive += 1
                let copiedMore = next.checkpointedPages > result.checkpointedPages
                result = next
                if !copiedMore { break }
            }
            copied = result.checkpointedPages
        } catch StoreError.sqlite(let code, _) where code & 0xff == SQLITE_BUSY {
            // Another process's connection is checkpointing: it copies the same pages.
        } catch {
            // I/O: nothing was lost (the WAL keeps every commit); the next one tries again.
            outcome.failed = 1
            FileHandle.standardError.write(Data("parley: WAL checkpoint failed: \(error)\n".utf8))
        }
        condition.lock()
        defer { condition.unlock() }
        counts.passive += outcome.passive
        counts.failed += outcome.failed
        // Only pages the WAL still holds as they were (it may have been reused meanwhile).
        if walPages >= pages { checkpointedPages = max(checkpointedPages, min(copied, walPages)) }
    }
}

private extension Duration {
    var timeInterval: TimeInterval {
        let parts = components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}
