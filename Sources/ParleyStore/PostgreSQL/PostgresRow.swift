import CLibPQ
import Glibc

/// Typed read access to one row of a PostgreSQL result, by 0-based column: the PostgreSQL half of
/// `Row`'s accessors (`Row.Storage.postgres`), with the same meanings as SQLite's (NULL reads as 0 /
/// "" where not optional).
///
/// Results come in text format: integers parse as decimal (`boolean`'s `t`/`f` read as 1/0, so a
/// flag column may be either type), reals with `strtod` (PostgreSQL prints the shortest text that
/// reads back exactly), `bytea` from its hex text (`PQunescapeBytea`). Valid only while its result lives; decode into value types right away.
struct PostgresRow {
    let result: OpaquePointer
    let row: Int32

    func isNull(_ column: Int32) -> Bool {
        PQgetisnull(result, row, column) != 0
    }

    func int64(_ column: Int32) -> Int64 {
        guard let value = PQgetvalue(result, row, column), !isNull(column) else { return 0 }
        switch UInt8(bitPattern: value.pointee) {
        case UInt8(ascii: "t"): return 1
        case UInt8(ascii: "f"): return 0
        default: return Int64(strtoll(value, nil, 10))
        }
    }

    func optionalInt64(_ column: Int32) -> Int64? {
        isNull(column) ? nil : int64(column)
    }

    func optionalDouble(_ column: Int32) -> Double? {
        guard !isNull(column), let value = PQgetvalue(result, row, column) else { return nil }
        return strtod(value, nil)
    }

    /// The column as text; NULL reads as "".
    func text(_ column: Int32) -> String {
        optionalText(column) ?? ""
    }

    func optionalText(_ column: Int32) -> String? {
        guard !isNull(column), let value = PQgetvalue(result, row, column) else { return nil }
        let count = Int(PQgetlength(result, row, column))
        return value.withMemoryRebound(to: UInt8.self, capacity: count) { bytes in
            PostgresText.decode(UnsafeBufferPointer(start: bytes, count: count))
        }
    }

    /// The column's bytes (`bytea`); nil for NULL.
    func optionalBytes(_ column: Int32) -> [UInt8]? {
        guard !isNull(column), let value = PQgetvalue(result, row, column) else { return nil }
        var count = 0
        let bytes = value.withMemoryRebound(to: UInt8.self, capacity: Int(PQgetlength(result, row, column)) + 1) {
            PQunescapeBytea($0, &count)
        }
        guard let bytes else { return nil }
        defer { PQfreemem(bytes) }
        return Array(UnsafeBufferPointer(start: bytes, count: count))
    }
}
