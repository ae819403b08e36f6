import Foundation
import Synchronization

/// The SQLite store of conversations and their message trees. Knows nothing of HTTP.
///
/// The ParleyStore module is the only one that touches SQLite. It must never know HTTP, providers,
/// Markdown, live generations or how credentials are made: password hashes and token digests are
/// strings it is given and compares, never computes.
///
/// ## Concurrency contract
/// `Store` is thread-safe and every method is synchronous and short: call it from any thread or
/// task (from async code it briefly blocks the caller, as GRDB's synchronous API does).
/// - **Writes** run on the one writer connection, serialised by a lock; each write method is
///   exactly one `BEGIN IMMEDIATE` transaction: all of it or none of it. The `…InSharedCommit` methods
///   (async) are one savepoint of a transaction shared with the writes queued beside them (`SharedCommits`).
/// - **Reads** run on a pool of `StoreConfiguration.readers` connections; each read method is one
///   deferred transaction, so it sees a single consistent snapshot, never a half-done write. WAL
///   lets reads run beside the write without blocking either.
/// - Methods never call each other under a lock, so there is no lock ordering to get wrong.
///
/// ## Durability
/// WAL with `synchronous = NORMAL`: once a write method returns, its transaction is in the WAL
/// file and survives a crash or `kill -9` of this process. Only an OS crash or power loss may undo
/// the last few commits (`FULL` would fsync every commit, too slow for 200 ms progress saves).
/// Checkpoints, which sync, run on a thread of their own (`Checkpointer`): a commit syncs only the WAL's
/// header when it reuses the WAL from its start.
///
/// ## Files
/// `path` must name a file (not `:memory:`): readers and writer share it through the WAL. Uploaded
/// files' bytes live in a second database beside it (`Store.filesDatabasePath(forDatabaseAt:)`) with
/// its own writer, lock and readers (`FileBlobs`), so a big upload never holds the writer above.
public final class Store: Sendable {
    /// The writer connection and the clock state that only writes touch.
    final class Writer {
        let database: Database
        /// The last `created_at` handed to a message; new messages get a strictly larger one, so
        /// sibling order is creation order even within one millisecond.
        var lastMessageMilliseconds: Int64
        /// The last `updated_at` handed to a conversation; every change gets a strictly larger
        /// one, so "newest first" is the order of changes even within one millisecond.
        var lastConversationMilliseconds: Int64

        init(database: Database, lastMessageMilliseconds: Int64, lastConversationMilliseconds: Int64) {
            self.database = database
            self.lastMessageMilliseconds = lastMessageMilliseconds
            self.lastConversationMilliseconds = lastConversationMilliseconds
        }

        func nextMessageMilliseconds(now: Int64) -> Int64 {
            lastMessageMilliseconds = max(now, lastMessageMilliseconds + 1)
            return lastMessageMilliseconds
        }

        func nextConversationMilliseconds(now: Int64) -> Int64 {
            lastConversationMilliseconds = max(now, lastConversationMilliseconds + 1)
            return lastConversationMilliseconds
        }
    }

    public let configuration: StoreConfiguration
    private let writer: ExclusiveAccess<Writer>
    private let readers: ReaderPool<any Database>
    /// Copies the WAL into the database file off the writer (see `Checkpointer`); nil on PostgreSQL.
    let checkpointer: Checkpointer?
    let now: @Sendable () -> Date
    /// The bytes of uploaded files (see `FileStore`).
    let fileBlobs: any BlobStore
    /// Which engine holds the data, for the start-up log (`SQLite PATH`, `PostgreSQL host:port/db`).
    public let engineDescription: String
    /// Held for a whole `saveFile` (blob, then row) and by `collectOrphanFiles`, so the collection never
    /// takes a just-written blob for an orphan before its row commits. Saves take turns on the files
    /// writer anyway; this adds only the short row insert to what they wait for.
    let fileSaves = Mutex(())
    /// The queue of writes that share transactions (a reply's start: see `SharedCommits`).
    let sharedCommits = SharedCommits()

    /// The default title of a conversation created without one.
    public static let defaultTitle = "New conversation"
    /// The page size of `listConversations` when the caller gives none.
    public static let defaultPageSize = 50
    /// How many matching documents `search` ranks by relevance (more: newest first) when the caller gives no number.
    public static let defaultSearchCandidates = 1000

    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    public convenience init(
        path: String, readers: Int = 4, busyTimeout: Duration = .milliseconds(5000)
    ) throws(StoreError) {
        try self.init(
            path: path, configuration: StoreConfiguration(readers: readers, busyTimeout: busyTimeout))
    }

    /// Opens (creating if needed) the database at `path` and its files database and applies pending
    /// migrations. The server then calls `markInterruptedAtStartup` and `collectOrphanFiles` (not done
    /// here: `parley user` opens a store beside a running server, whose saves it must not disturb).
    /// `now` is the clock for timestamps (tests pin it to make equal `updated_at` values).
    public convenience init(
        path: String, configuration: StoreConfiguration,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(StoreError) {
        try configuration.validate()
        let timeout = configuration.busyTimeoutMilliseconds
        let database = try SQLiteDatabase(path: path, readOnly: false, busyTimeoutMilliseconds: timeout)
        try Migration.migrate(database)
        let checkpointer = try Checkpointer(
            path: path, busyTimeoutMilliseconds: timeout, limits: configuration.checkpoints)
        do {
            try database.reportWALSize(to: checkpointer, limitPages: configuration.checkpoints.pages)
            var readers: [any Database] = []
            for _ in 0..<configuration.readers {
                readers.append(try SQLiteDatabase(path: path, readOnly: true, busyTimeoutMilliseconds: timeout))
            }
            let blobs = try FileBlobs(
                path: Self.filesDatabasePath(forDatabaseAt: path), readers: configuration.readers,
                busyTimeoutMilliseconds: timeout)
            try self.init(writer: database, readers: readers, blobs: blobs, checkpointer: checkpointer,
                          engineDescription: "SQLite \(path)", configuration: configuration, now: now)
        } catch {
            checkpointer.stop()
            throw error
        }
    }

    /// A store over open connections of one engine, migrated already: `writer` takes every write,
    /// `readers` (at least one) the reads.
    init(
        writer database: any Database, readers: [any Database], blobs: any BlobStore, checkpointer: Checkpointer?,
        engineDescription: String, configuration: StoreConfiguration, now: @escaping @Sendable () -> Date
    ) throws(StoreError) {
        let lastMessage = try database.queryFirst("SELECT coalesce(max(created_at), 0) FROM messages") {
            row in row.int64(0)
        } ?? 0
        let lastConversation = try database.queryFirst(
            "SELECT coalesce(max(updated_at), 0) FROM conversations"
        ) { row in row.int64(0) } ?? 0
        self.writer = ExclusiveAccess(Writer(
            database: database, lastMessageMilliseconds: lastMessage,
            lastConversationMilliseconds: lastConversation))
        self.readers = ReaderPool(readers) { (database, body) throws(StoreError) in
            try database.transaction(.deferred, body)
        }
        self.checkpointer = checkpointer
        self.fileBlobs = blobs
        self.engineDescription = engineDescription
        self.configuration = configuration
        self.now = now
    }

    deinit {
        // The thread holds the checkpointer (and its connection) until it is told to stop.
        checkpointer?.stop()
    }

    /// Where the files database of the main database at `path` lives: `NAME.files.sqlite` beside it
    /// (`parley.sqlite` -> `parley.files.sqlite`). Backups copy both.
    public static func filesDatabasePath(forDatabaseAt path: String) -> String {
        FileBlobs.path(forDatabaseAt: path)
    }

    // MARK: - Connections

    /// Runs `body` as one write transaction on the writer connection.
    func write<T>(_ body: (Writer, _ now: Int64) throws(StoreError) -> T) throws(StoreError) -> T {
        var attempt = 0
        while true {
            do {
                return try writer.withLock { (writer: Writer) throws(StoreError) -> T in
                    let now = self.now().millisecondsSince1970
                    return try writer.database.transaction(.immediate) { () throws(StoreError) -> T in
                        try body(writer, now)
                    }
                }
            } catch .postgres(let sqlstate, _) where Self.retriedStates.contains(sqlstate) && attempt < Self.writeRetries {
                // PostgreSQL (several nodes' writers at once) undid the whole transaction to break a deadlock
                // or a serialization conflict: nothing of it was written, so it runs again, a moment later.
                attempt += 1
                Thread.sleep(forTimeInterval: Double.random(in: 0.002...0.010) * Double(attempt))
            }
        }
    }

    /// PostgreSQL's codes for a transaction undone whole that succeeds when run again: `40P01` (one side
    /// of a deadlock, as a conversation's delete on one node and its reply's end on another can make)
    /// and `40001` (a serialization failure).
    static let retriedStates: Set<String> = ["40P01", "40001"]
    /// How many times such a transaction runs again before its error is the answer.
    static let writeRetries = 3

    /// Runs `body` in the next shared write transaction (`SharedCommits`), in a savepoint of its own, and
    /// answers once that transaction has committed (or with `body`'s own error, its changes undone).
    /// For writes whose callers can wait for the others of their batch; never call it inside a write.
    @concurrent
    func sharedWrite<T: Sendable>(
        _ body: @escaping @Sendable (Writer, _ now: Int64) throws(StoreError) -> T
    ) async throws(StoreError) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, StoreError>, Never>) in
            sharedCommits.submit(PendingWrite(body, continuation: continuation), to: self)
        }
        return try result.get()
    }

    /// Runs a batch of `SharedCommits` in one write transaction, then answers each write. If the
    /// transaction fails inside a write (SQLite rolled it back: a full disk), that write fails and the
    /// others run again in a batch of their own; if it fails at its start or commit, all fail alike.
    func writeShared(_ batch: [any SharedWrite]) {
        var failedWrite: Int?
        do {
            try write { (writer, now) throws(StoreError) in
                for (index, pending) in batch.enumerated() {
                    failedWrite = index
                    try pending.run(writer, now: now)
                }
                failedWrite = nil
            }
        } catch {
            guard let failedWrite, batch.count > 1 else {
                for pending in batch { pending.answer(commitFailure: error) }
                return
            }
            batch[failedWrite].answer(commitFailure: error)
            writeShared(batch.enumerated().filter { $0.offset != failedWrite }.map(\.element))
            return
        }
        sharedCommits.committed(batch.count)
        for pending in batch { pending.answer(commitFailure: nil) }
    }

    /// Runs `body` as one read transaction on a pooled reader connection.
    func read<T>(_ body: (Database) throws(StoreError) -> T) throws(StoreError) -> T {
        try readers.read(body)
    }

    // MARK: - Startup

    /// Marks every message still `streaming` as `interrupted`, keeping its saved content: after a
    /// restart no generation is running, so nothing can finish them. Call once at startup, before
    /// serving. Write transaction. Returns how many messages changed.
    @discardableResult
    public func markInterruptedAtStartup() throws(StoreError) -> Int {
        try write { (writer, now) throws(StoreError) in
            try cancelOpenToolCalls(writer.database)
            return try writer.database.run(
                "UPDATE messages SET status = 'interrupted', updated_at = ? WHERE status = 'streaming'",
                [.integer(now)])
        }
    }

    /// Up to `limit` finished assistant messages that have no stored HTML (user and system messages
    /// never have any: they are shown as plain text): replies cut by a crash (see
    /// `markInterruptedAtStartup`) or written by a version that did not store it. Give them HTML with
    /// `saveHTML` so they show like any finished message. Read transaction; an index holds exactly
    /// the rows without HTML.
    public func finishedMessagesWithoutHTML(limit: Int = 100) throws(StoreError) -> [Message] {
        try read { (database) throws(StoreError) in
            try database.query(
                """
                SELECT \(Message.columns) FROM messages \(database.dialect.indexedBy("messages_without_html"))
                WHERE html IS NULL AND role = 'assistant' AND status <> 'streaming' LIMIT ?
                """,
                [.integer(Int64(limit))], Message.init(row:))
        }
    }

    /// Stores rendered HTML for finished messages that have none, by message id (never over HTML a
    /// reply finished with, never on a streaming message). Does not change `updated_at`: rendering is
    /// not an edit. Write transaction; returns how many messages changed.
    @discardableResult
    public func saveHTML(_ htmlByID: [String: String]) throws(StoreError) -> Int {
        guard !htmlByID.isEmpty else { return 0 }
        return try write { (writer, _) throws(StoreError) in
            var changed = 0
            for (id, html) in htmlByID {
                changed += try writer.database.run(
                    "UPDATE messages SET html = ? WHERE id = ? AND html IS NULL AND status <> 'streaming' AND role = 'assistant'",
                    [.text(html), .text(id)])
            }
            return changed
        }
    }
}
