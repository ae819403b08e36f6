extension SQLDialect {
    /// SQLite's `INDEXED BY index`, which pins the plan a statement was written for; nothing on
    /// PostgreSQL, which has no index hints and picks the partial or owner-led index from the WHERE
    /// clause (migrations give it the same indexes).
    func indexedBy(_ index: String) -> String {
        switch self {
        case .sqlite: "INDEXED BY \(index)"
        case .postgres: ""
        }
    }

    /// Locks the rows a read-modify-write transaction read (`FOR UPDATE OF alias`) on PostgreSQL, where
    /// several nodes' writers run at once; SQLite has one writer at a time, and no such clause.
    func forUpdate(of alias: String) -> String {
        switch self {
        case .sqlite: ""
        case .postgres: "FOR UPDATE OF \(alias)"
        }
    }
}
