import CSQLite

/// A prepared statement owned by one `Database`, cached there for the connection's lifetime.
///
/// Not thread-safe: used only while the owning connection is held. Each use binds, steps to
/// completion (or until the caller has what it needs) and resets, so a cached statement never
/// holds a read snapshot or write lock between uses.
final class Statement {
    let handle: OpaquePointer
    private let connection: OpaquePointer

    init(connection: OpaquePointer, sql: String) throws(StoreError) {
        var handle: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard rc == SQLITE_OK, let handle else {
            sqlite3_finalize(handle)
            throw StoreError.from(connection: connection, code: rc)
        }
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Binds `values` to parameters 1...n (clearing earlier bindings first).
    func bind(_ values: [SQLValue]) throws(StoreError) {
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null:
                rc = sqlite3_bind_null(handle, index)
            case .integer(let number):
                rc = sqlite3_bind_int64(handle, index, number)
            case .text(let string):
                rc = Self.bindText(string, handle: handle, index: index)
            case .real(let number):
                rc = sqlite3_bind_double(handle, index, number)
            case .blob(let bytes):
                rc = bytes.withUnsafeBytes { raw in
                    sqlite3_bind_blob64(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                        sqlite3_uint64(raw.count), parley_sqlite_transient())
                }
            }
            guard rc == SQLITE_OK else { throw StoreError.from(connection: connection, code: rc) }
        }
    }

    /// Binds `string` with its explicit UTF-8 length: passed as a C string, SQLite would read up to
    /// the first U+0000 and store everything after it nowhere ("a\u{0}b" became "a").
    private static func bindText(_ string: String, handle: OpaquePointer, index: Int32) -> Int32 {
        var string = string
        return string.withUTF8 { bytes in
            // A nil pointer would bind NULL, not "": an empty text gets a pointer of its own.
            guard let base = bytes.baseAddress, !bytes.isEmpty else {
                return sqlite3_bind_text(handle, index, "", 0, parley_sqlite_transient())
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { text in
                sqlite3_bind_text64(handle, index, text, sqlite3_uint64(bytes.count), parley_sqlite_transient(),
                                    UInt8(SQLITE_UTF8))
            }
        }
    }

    /// Advances one row: true when a row is available through `row`, false when done.
    func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw StoreError.from(connection: connection, code: rc)
        }
    }

    /// Ends this use: releases the statement's snapshot/locks so the cached statement is idle.
    func reset() {
        sqlite3_reset(handle)
    }

    /// The current row; valid only until the next `step()` or `reset()`.
    var row: Row { Row(sqlite: handle) }
}
