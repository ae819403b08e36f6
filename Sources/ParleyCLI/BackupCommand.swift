import ParleyServer
import ParleyStore

/// `parley backup FILE`: a consistent copy of the configured database (`PARLEY_DB`) and of the files
/// database beside it (to `FILE` with `.files.sqlite` for its extension), safe to take while a server
/// writes to them. The store does the copying (`StoreBackup`); this only words it.
public enum BackupCommand {
    /// What `parley` prints and its exit status: 0 copied, 2 the file exists (bad use without
    /// `--force`), 1 the copy failed (the message names the file).
    public static func run(_ configuration: ParleyConfiguration, destination: String, replacing: Bool)
        -> (status: Int32, message: String) {
        if let database = configuration.database {
            return (2, "parley backup copies the SQLite file; the store is PostgreSQL (\(database)): use pg_dump")
        }
        let source = configuration.databasePath
        do {
            let summary = try StoreBackup.copy(from: source, to: destination, replacing: replacing)
            var message = "backed up \(source) to \(destination) (\(summary.pages) pages, \(summary.bytes) bytes)"
            if let files = summary.filesPath {
                message += "; its files to \(files) (\(summary.filePages) pages, \(summary.fileBytes) bytes)"
                if summary.droppedFiles > 0 {
                    message += "; \(summary.droppedFiles) files deleted during the backup were left out"
                }
            }
            return (0, message)
        } catch StoreError.fileExists(let path) {
            return (2, "\(path) already exists; --force replaces it")
        } catch {
            return (1, "backup of \(source) failed: \(error)")
        }
    }
}
