/// One table of a `StoreMigration`: its rows on both sides after the copy, which `parley migrate`
/// prints, one line each, and which must be equal for the copy to commit.
public struct MigratedTable: Sendable, Equatable, CustomStringConvertible {
    /// How the table's rows reached PostgreSQL.
    public enum Transfer: String, Sendable {
        /// Copied row by row, every column both schemas have.
        case copied
        /// Derived from copied rows (SQLite's FTS5 search index): built again by PostgreSQL's own SQL.
        case rebuilt
        /// File bytes, from the files database beside the SQLite file (`PostgresBlobs`' tables).
        case files
    }

    /// The table's name (the PostgreSQL one; for file bytes, `blobs -> blob_files`).
    public let name: String
    public let sourceRows: Int64
    public let targetRows: Int64
    public let transfer: Transfer

    public init(name: String, sourceRows: Int64, targetRows: Int64, transfer: Transfer) {
        self.name = name
        self.sourceRows = sourceRows
        self.targetRows = targetRows
        self.transfer = transfer
    }

    /// Whether both sides hold as many rows.
    public var matches: Bool { sourceRows == targetRows }

    /// `messages  1200 -> 1200  copied`.
    public var description: String {
        "\(name)  \(sourceRows) -> \(targetRows)  \(transfer.rawValue)"
    }
}
