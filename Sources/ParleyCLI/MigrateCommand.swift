import Foundation
import ParleyStore

/// `parley migrate --from sqlite:PATH --to postgres://…`: moves a single-node store (its SQLite file and
/// the files database beside it) into an empty PostgreSQL database, for `PARLEY_DATABASE_URL`. The
/// store does the copying and the checking (`StoreMigration`); this reads the operands and words the
/// outcome. `--to` may be left out when `PARLEY_DATABASE_URL` names the target. The URL's password is
/// never printed.
public struct MigrateCommand: Sendable, Equatable {
    /// The SQLite file to copy from (`--from sqlite:PATH`).
    public let source: String
    /// The PostgreSQL database to copy into (`--to`).
    public let target: PostgresLocation

    static let usage = "usage: parley migrate --from sqlite:PATH --to postgres://USER:PASSWORD@HOST:PORT/DATABASE"

    /// Reads what follows `parley migrate`: `--from` and `--to`, each once, as `--name value` or
    /// `--name=value`. Bad use throws a one-line reason that never repeats a password.
    public static func parse(_ arguments: [String], environment: [String: String]) throws(CommandLineError)
        -> MigrateCommand {
        var values: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            let (name, inline) = argument.firstIndex(of: "=").map {
                (String(argument[..<$0]), Optional(String(argument[argument.index(after: $0)...])))
            } ?? (argument, nil)
            guard ["--from", "--to"].contains(name) else {
                throw .usage("migrate takes --from and --to, not \(shown(argument)) (\(usage))")
            }
            guard values[name] == nil else { throw .usage("\(name) is given twice (\(usage))") }
            if let inline {
                values[name] = inline
            } else {
                guard index < arguments.count else { throw .usage("\(name) needs a value (\(usage))") }
                values[name] = arguments[index]
                index += 1
            }
        }
        guard let from = values["--from"] else { throw .usage("migrate needs --from sqlite:PATH (\(usage))") }
        guard from.hasPrefix("sqlite:"), from.count > "sqlite:".count else {
            throw .usage("--from takes sqlite:PATH, the SQLite file to copy (\(usage))")
        }
        guard let to = values["--to"] ?? environment["PARLEY_DATABASE_URL"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw .usage("migrate needs --to postgres://… (or PARLEY_DATABASE_URL) (\(usage))")
        }
        guard let target = PostgresLocation(url: to) else {
            throw .usage("--to takes a postgres:// or postgresql:// URL (\(usage))")
        }
        return MigrateCommand(source: String(from.dropFirst("sqlite:".count)), target: target)
    }

    /// An argument as it may be printed: a URL without its password.
    private static func shown(_ argument: String) -> String {
        guard let schemeEnd = argument.range(of: "://") else { return argument }
        return (PostgresLocation(url: "postgres" + argument[schemeEnd.lowerBound...])?.description)
            .map { String(argument[..<schemeEnd.lowerBound]) + $0.dropFirst("postgres".count) } ?? "(a URL)"
    }

    /// Runs the copy. Returns the exit status and the lines to print: on success (0) one line per table
    /// (`name  rows in SQLite -> rows in PostgreSQL  how`) and a summary, for standard output; otherwise
    /// one line for standard error, with 2 for bad use (no such file, a target that is not empty) and 1
    /// for a failure. Either way nothing is left half-copied in the target.
    public func run() -> (status: Int32, lines: [String]) {
        let report: StoreMigrationReport
        do {
            report = try StoreMigration.run(from: source, to: target)
        } catch {
            let retry = error.isBadUse ? "" : "; nothing was committed, so the same command can run again"
            return (error.isBadUse ? 2 : 1, ["migrate from \(source) to \(target) failed: \(error)\(retry)"])
        }
        let width = report.tables.map(\.name.count).max() ?? 0
        let counts = report.tables.map { String($0.sourceRows).count }.max() ?? 0
        var lines = report.tables.map { table in
            table.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                + String(repeating: " ", count: counts - String(table.sourceRows).count) + "\(table.sourceRows) -> "
                + "\(table.targetRows)  \(table.transfer.rawValue)"
        }
        let megabytes = Double(report.fileBytes) / 1_048_576
        lines.append("migrated \(source) to \(target): \(report.tables.count) tables, every count equal, "
                     + "\(String(format: "%.1f", megabytes)) MB of files, in \(String(format: "%.1f", report.seconds)) s")
        return (0, lines)
    }
}
