/// Why `parley migrate` (`StoreMigration`) copied nothing. Every case leaves the target as it was:
/// the copy is one PostgreSQL transaction, rolled back on any failure, so the same command can run again.
public enum StoreMigrationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The SQLite file to copy from does not exist (or is not a file).
    case sourceMissing(path: String)
    /// The SQLite file's schema is not the one this build writes: older (start this version's
    /// `parley serve` on it once, which migrates it) or newer (use the newer build).
    case sourceSchema(path: String, version: Int, expected: Int)
    /// The target holds rows already (the tables named): only an empty database is a target.
    case targetNotEmpty(tables: [String])
    /// The target database holds tables of something else (no `schema_migrations`): nothing was created there.
    case targetNotParley(tables: [String])
    /// The source holds data the target has no place for (a table or column this build's PostgreSQL
    /// schema lacks); copying would lose it.
    case noPlaceInTarget(String)
    /// After the copy, a table's rows differ in number between the two databases (the tables named).
    case countMismatch([MigratedTable])
    /// Either engine failed.
    case store(StoreError)

    /// Whether the command was used wrongly (a missing file, a non-empty target), rather than failing.
    public var isBadUse: Bool {
        switch self {
        case .sourceMissing, .sourceSchema, .targetNotEmpty, .targetNotParley: true
        case .noPlaceInTarget, .countMismatch, .store: false
        }
    }

    public var description: String {
        switch self {
        case .sourceMissing(let path):
            "no SQLite database at \(path) (give --from sqlite:PATH, the file PARLEY_DB names)"
        case .sourceSchema(let path, let version, let expected) where version < expected:
            "\(path) has schema version \(version), this build copies \(expected): "
                + "run this build's `parley serve` on it once (it migrates the file), stop it, then migrate"
        case .sourceSchema(let path, let version, let expected):
            "\(path) has schema version \(version), newer than this build's \(expected): use the newer build"
        case .targetNotEmpty(let tables):
            "the PostgreSQL database is not empty (rows in \(tables.joined(separator: ", "))): "
                + "migrate into a new, empty database (CREATE DATABASE … OWNER …)"
        case .targetNotParley(let tables):
            "the PostgreSQL database holds other tables (\(tables.prefix(5).joined(separator: ", "))"
                + "\(tables.count > 5 ? ", …" : "")): migrate into a new, empty database"
        case .noPlaceInTarget(let why):
            why
        case .countMismatch(let tables):
            "row counts differ after the copy ("
                + tables.map { "\($0.name): \($0.sourceRows) in SQLite, \($0.targetRows) in PostgreSQL" }
                    .joined(separator: "; ")
                + "); nothing was committed"
        case .store(let error):
            "\(error)"
        }
    }
}
