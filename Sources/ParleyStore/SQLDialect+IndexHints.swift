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
}
