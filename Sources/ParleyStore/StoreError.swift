import CSQLite

/// Why a `Store` call failed. Bad input and missing rows are typed cases, never crashes.
public enum StoreError: Error, Equatable, Sendable {
    /// The named thing (e.g. "conversation abc", "message xyz") does not exist (or not where asked).
    case notFound(String)
    /// A pagination cursor that this store did not produce (or that was altered).
    case invalidCursor
    /// The request contradicts the current state (e.g. resuming a message that is still streaming).
    case conflict(String)
    /// A configuration value outside its documented range.
    case invalidConfiguration(String)
    /// SQLite failed; `code` is the extended result code.
    case sqlite(code: Int32, message: String)

    static func from(connection: OpaquePointer, code: Int32) -> StoreError {
        .sqlite(code: code, message: String(cString: sqlite3_errmsg(connection)))
    }

    /// A stored value this version cannot decode (e.g. an unknown role written by a newer version).
    static func corrupt(_ detail: String) -> StoreError {
        .sqlite(code: SQLITE_CORRUPT, message: detail)
    }
}
