/// What `StoreMigration.run` did: the tables in the order they were copied, the file bytes, the time.
public struct StoreMigrationReport: Sendable {
    public let tables: [MigratedTable]
    /// The content bytes of every copied file.
    public let fileBytes: Int64
    public let seconds: Double
}
