import CSQLite

/// Typed read access to the current row of a query, by 0-based column index, on either engine.
///
/// Valid only until the query moves on; decode into value types right away.
struct Row {
    /// Where the row's values are.
    enum Storage {
        /// A stepping SQLite statement.
        case sqlite(OpaquePointer)
        /// A row of a PostgreSQL result (read through `PostgresRow`).
        case postgres(result: OpaquePointer, row: Int32)
    }

    let storage: Storage

    init(sqlite statement: OpaquePointer) {
        storage = .sqlite(statement)
    }

    init(postgres row: PostgresRow) {
        storage = .postgres(result: row.result, row: row.row)
    }

    func isNull(_ column: Int32) -> Bool {
        switch storage {
        case .sqlite(let statement): sqlite3_column_type(statement, column) == SQLITE_NULL
        case .postgres(let result, let row): PostgresRow(result: result, row: row).isNull(column)
        }
    }

    func int64(_ column: Int32) -> Int64 {
        switch storage {
        case .sqlite(let statement): sqlite3_column_int64(statement, column)
        case .postgres(let result, let row): PostgresRow(result: result, row: row).int64(column)
        }
    }

    func optionalInt64(_ column: Int32) -> Int64? {
        isNull(column) ? nil : int64(column)
    }

    func optionalDouble(_ column: Int32) -> Double? {
        guard !isNull(column) else { return nil }
        switch storage {
        case .sqlite(let statement): return sqlite3_column_double(statement, column)
        case .postgres(let result, let row): return PostgresRow(result: result, row: row).optionalDouble(column)
        }
    }

    /// The column as text; NULL reads as "".
    func text(_ column: Int32) -> String {
        optionalText(column) ?? ""
    }

    func optionalText(_ column: Int32) -> String? {
        switch storage {
        case .sqlite(let statement):
            guard let bytes = sqlite3_column_text(statement, column) else { return nil }
            let count = Int(sqlite3_column_bytes(statement, column))
            return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
        case .postgres(let result, let row):
            return PostgresRow(result: result, row: row).optionalText(column)
        }
    }

    /// The column's bytes (a BLOB or `bytea`); nil for NULL.
    func optionalBytes(_ column: Int32) -> [UInt8]? {
        guard !isNull(column) else { return nil }
        switch storage {
        case .sqlite(let statement):
            let count = Int(sqlite3_column_bytes(statement, column))
            guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return [] }
            return Array(UnsafeRawBufferPointer(start: bytes, count: count))
        case .postgres(let result, let row):
            return PostgresRow(result: result, row: row).optionalBytes(column)
        }
    }
}
