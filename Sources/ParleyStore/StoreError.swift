import CSQLite

/// Why a `Store` call failed. Bad input and missing rows are typed cases, never crashes.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The record does not exist (or not where asked).
    case notFound(MissingRecord)
    /// A pagination cursor that this store did not produce (or that was altered).
    case invalidCursor
    /// A search query SQLite's FTS5 cannot parse; the text says where (e.g. `fts5: syntax error near "AND"`).
    case invalidQuery(String)
    /// An imported conversation that is not a sound tree (duplicate ids, a missing parent, a cycle, a
    /// streaming message); the text names the message. Nothing was written.
    case invalidImport(String)
    /// The request contradicts the current state (e.g. resuming a message that is still streaming).
    case conflict(String)
    /// A configuration value outside its documented range.
    case invalidConfiguration(String)
    /// SQLite failed; `code` is the extended result code. Failures to open a file name the file.
    case sqlite(code: Int32, message: String)
    /// PostgreSQL refused a statement; `sqlstate` is its five-character code (e.g. `23505`, a unique
    /// violation). The message never holds the connection URL's password.
    case postgres(sqlstate: String, message: String)
    /// The database cannot be reached (PostgreSQL down, the connection lost and not re-established);
    /// the request may succeed later. The HTTP layer answers 503 `store_unavailable`.
    case unavailable(String)
    /// A file that would be replaced exists, and replacing it was not asked for (a backup's target).
    case fileExists(String)

    public var description: String {
        switch self {
        case .notFound(let what): "\(what) not found"
        case .invalidCursor: "invalid cursor"
        case .invalidQuery(let why): "invalid search query: \(why)"
        case .invalidImport(let why): why
        case .conflict(let why): why
        case .invalidConfiguration(let why): why
        case .sqlite(let code, let message): "\(message) (SQLite code \(code))"
        case .postgres(let sqlstate, let message): "\(message) (PostgreSQL \(sqlstate))"
        case .unavailable(let why): "the database is unavailable: \(why)"
        case .fileExists(let path): "\(path) already exists"
        }
    }

    static func from(connection: OpaquePointer, code: Int32) -> StoreError {
        .sqlite(code: code, message: String(cString: sqlite3_errmsg(connection)))
    }

    /// Whether the database could not be reached or dropped the connection (PostgreSQL down, restarting
    /// or shutting down: SQLSTATE classes 08 and 57P), so the same request may succeed later.
    public var isUnavailable: Bool {
        switch self {
        case .unavailable: true
        case .postgres(let sqlstate, _): sqlstate.hasPrefix("08") || sqlstate.hasPrefix("57P")
        default: false
        }
    }

    /// Whether this is SQLite failing to open, create or write a file (permissions, a missing folder,
    /// a read-only mount), which the operator fixes on the file system.
    public var isFileAccess: Bool {
        guard case .sqlite(let code, _) = self else { return false }
        return [SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH].contains(code & 0xff)
    }

    /// The same failure, saying it happened while opening the database at `path`.
    func opening(_ path: String) -> StoreError {
        guard case .sqlite(let code, let message) = self else { return self }
        return .sqlite(code: code, message: "cannot open the database \(path): \(message)")
    }

    /// A stored value this version cannot decode (e.g. an unknown role written by a newer version).
    static func corrupt(_ detail: String) -> StoreError {
        .sqlite(code: SQLITE_CORRUPT, message: detail)
    }
}
