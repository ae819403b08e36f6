/// A value bound to a `?` parameter of a statement, on either engine. Keeps SQL parameterised: callers never splice
/// values into SQL text.
enum SQLValue {
    case null
    case integer(Int64)
    case text(String)
    case real(Double)
    /// Bytes (a file's chunk): a BLOB in SQLite, `bytea` in PostgreSQL.
    case blob([UInt8])

    /// `.text` for a string, `.null` for nil.
    static func optionalText(_ value: String?) -> SQLValue {
        value.map(SQLValue.text) ?? .null
    }

    /// `.real` for a number, `.null` for nil.
    static func optionalReal(_ value: Double?) -> SQLValue {
        value.map(SQLValue.real) ?? .null
    }

    /// `.integer` for a number, `.null` for nil.
    static func optionalInteger(_ value: Int?) -> SQLValue {
        value.map { .integer(Int64($0)) } ?? .null
    }

    /// `.integer(1)` or `.integer(0)`: SQLite has no boolean type.
    static func bool(_ value: Bool) -> SQLValue {
        .integer(value ? 1 : 0)
    }
}
