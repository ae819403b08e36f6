import Foundation
import ParleyStore

/// Words added to a start-up failure whose fix SQLite's message does not say.
public enum StartupHint {
    /// For a database file this process cannot open or write (a root-owned Docker volume or bind
    /// mount, most often): which user needs access. Empty for any other error.
    public static func forError(_ error: Error) -> String {
        guard let error = error as? StoreError, error.isFileAccess else { return "" }
        return " (parley runs as uid \(getuid()), gid \(getgid()): the database file and its folder must be writable by it)"
    }
}
