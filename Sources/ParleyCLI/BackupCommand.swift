import ParleyServer
import ParleyStore

/// `parley backup FILE`: a consistent copy of the configured database (`PARLEY_DB`), safe to take
/// while a server writes to it. The store does the copying (`StoreBackup`); this only words it.
public enum BackupCommand {
    /// What `parley` prints and its exit status: 0 copied, 2 the file exists (bad use without
    /// `--force`), 1 the copy failed (the message names the file).
    public static func run(_ configuration: ParleyConfiguration, destination: String, replacing: Bool)
        -> (status: Int32, message: String) {
        let source = configuration.databasePath
        do {
            let summary = try StoreBackup.copy(from: source, to: destination, replacing: replacing)
            return (0, "backed up \(source) to \(destination) (\(summary.pages) pages, \(summary.bytes) bytes)")
        } catch StoreError.fileExists(let path) {
            return (2, "\(path) already exists; --force replaces it")
        } catch {
            return (1, "backup of \(source) failed: \(error)")
        }
    }
}
