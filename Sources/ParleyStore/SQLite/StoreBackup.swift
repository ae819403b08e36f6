import CSQLite
import Foundation

/// A consistent copy of a Parley database taken with SQLite's online backup API while a server may be
/// writing to it (from this process or another).
///
/// A copy of the file alone is not a backup: in WAL mode committed rows sit in `-wal` until a
/// checkpoint. The backup reads every page, WAL included, in **one** read transaction
/// (`sqlite3_backup_step(-1)`), so it is one snapshot; WAL readers never block the writer, and a
/// stepwise backup would restart at every write and might never finish under steady writes.
///
/// The copy is written to `DESTINATION.partial-PID`, checked with `PRAGMA quick_check`, then moved to
/// its name, so a failed backup never leaves a file that looks like one. Synchronous; call it from
/// any thread. It opens its own connections and never creates or migrates the source.
///
/// The files database beside the source (`Store.filesDatabasePath(forDatabaseAt:)`) is copied too,
/// to the files path of the destination (see `StoreBackup+Files`).
public enum StoreBackup {
    /// What was copied.
    public struct Summary: Sendable, Equatable {
        public let pages: Int
        public let bytes: Int
        /// The copy of the files database; nil when the source has none (written before files existed).
        public let filesPath: String?
        public let filePages: Int
        public let fileBytes: Int
        /// Files left out of the copy because they were deleted while it was taken (see `StoreBackup+Files`).
        public let droppedFiles: Int
    }

    /// Copies the database at `source` to the new file `destination`. An existing `destination` is
    /// an error (`StoreError.fileExists`) unless `replacing` is true. Waits up to `busyTimeout` for
    /// a lock another connection holds.
    @discardableResult
    public static func copy(
        from source: String, to destination: String, replacing: Bool = false,
        busyTimeout: Duration = .seconds(10)
    ) throws(StoreError) -> Summary {
        let files = FilesCopy(source: source, destination: destination)
        if !replacing {
            for path in [destination] + (files.exists ? [files.destination] : [])
            where FileManager.default.fileExists(atPath: path) {
                throw StoreError.fileExists(path)
            }
        }
        let timeout = StoreConfiguration(busyTimeout: busyTimeout).busyTimeoutMilliseconds
        let partial = "\(destination).partial-\(getpid())"
        unlink(partial)
        unlink(files.partial)
        do throws(StoreError) {
            // The main database first: see `StoreBackup+Files` for why this order makes a sound pair.
            let main = try copyPages(from: source, to: partial, busyTimeoutMilliseconds: timeout)
            var summary = Summary(pages: main.pages, bytes: main.bytes, filesPath: nil, filePages: 0, fileBytes: 0,
                                  droppedFiles: 0)
            if files.exists {
                summary = try copyFiles(files, besideCopy: partial, summary: summary, busyTimeoutMilliseconds: timeout)
                try place(files.partial, at: files.destination, replacing: replacing)
            }
            do throws(StoreError) {
                try place(partial, at: destination, replacing: replacing)
            } catch {
                if files.exists, !replacing { unlink(files.destination) }  // the pair, or nothing
                throw error
            }
            return summary
        } catch {
            unlink(partial)
            unlink(files.partial)
            throw error
        }
    }

    // MARK: - Steps

    /// Copies every page of `source` into the new file `partial` in one snapshot, then checks it.
    static func copyPages(
        from source: String, to partial: String, busyTimeoutMilliseconds: Int32
    ) throws(StoreError) -> (pages: Int, bytes: Int) {
        // No CREATE: a mistyped PARLEY_DB must fail, not back up a new empty file.
        let from = try open(source, flags: SQLITE_OPEN_READWRITE, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        defer { sqlite3_close_v2(from) }
        let to = try open(partial, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                          busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        defer { sqlite3_close_v2(to) }

        guard let backup = sqlite3_backup_init(to, "main", from, "main") else {
            throw StoreError.from(connection: to, code: sqlite3_errcode(to))
        }
        let deadline = ContinuousClock.now + .milliseconds(Int(busyTimeoutMilliseconds))
        var rc = sqlite3_backup_step(backup, -1)
        // BUSY/LOCKED: another connection holds a lock this step needs; it did nothing, so retry.
        while rc == SQLITE_BUSY || rc == SQLITE_LOCKED, ContinuousClock.now < deadline {
            sqlite3_sleep(20)
            rc = sqlite3_backup_step(backup, -1)
        }
        let pages = Int(sqlite3_backup_pagecount(backup))
        let finish = sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE else {
            throw StoreError.sqlite(code: rc, message: "backup of \(source) failed: \(String(cString: sqlite3_errstr(rc)))")
        }
        guard finish == SQLITE_OK else { throw StoreError.from(connection: to, code: finish) }
        try check(to, path: partial)
        let pageSize = Int(try single(to, "PRAGMA page_size") ?? "0") ?? 0
        return (pages, pages * pageSize)
    }

    /// Moves the checked copy to its name. Without `replacing`, `link` fails if the name was taken
    /// meanwhile, where `rename` would silently replace it.
    private static func place(_ partial: String, at destination: String, replacing: Bool) throws(StoreError) {
        if replacing {
            guard rename(partial, destination) == 0 else { throw fileError("cannot write \(destination)") }
            return
        }
        guard link(partial, destination) == 0 else {
            if errno == EEXIST { throw StoreError.fileExists(destination) }
            throw fileError("cannot write \(destination)")
        }
        unlink(partial)
    }

    // MARK: - SQLite helpers

    static func open(_ path: String, flags: Int32, busyTimeoutMilliseconds: Int32) throws(StoreError)
        -> OpaquePointer {
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(handle)
            throw StoreError.sqlite(code: rc, message: message).opening(path)
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        return handle
    }

    /// `PRAGMA quick_check` must answer exactly "ok".
    static func check(_ connection: OpaquePointer, path: String) throws(StoreError) {
        let answer = try single(connection, "PRAGMA quick_check")
        guard answer == "ok" else {
            throw StoreError.corrupt("the copy \(path) failed quick_check: \(answer ?? "no answer")")
        }
    }

    /// The first column of the first row of `sql`, as text.
    static func single(_ connection: OpaquePointer, _ sql: String) throws(StoreError) -> String? {
        let statement = try Statement(connection: connection, sql: sql)
        guard try statement.step() else { return nil }
        return statement.row.text(0)
    }

    private static func fileError(_ what: String) -> StoreError {
        .sqlite(code: SQLITE_CANTOPEN, message: "\(what): \(String(cString: strerror(errno)))")
    }
}
