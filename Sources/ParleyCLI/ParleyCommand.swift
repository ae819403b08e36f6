import ParleyServer

/// Module ParleyCLI: the command line (`serve`, `backup`, `user`, `healthcheck`, `migrate`). It must never
/// know routes or handlers: it starts a `ParleyApp` or opens the store.
///
/// What `parley` was asked to do. The first argument may name a command; the rest are the command's
/// operands and the configuration flags of the README (`--port 9000`), read with the environment.
///
/// To add a command: a case here, its parser in `init`, and its function in
/// `main.swift`. Bad use throws `CommandLineError`, which `parley` prints on one line and exits 2.
public enum ParleyCommand: Sendable {
    /// `parley` or `parley serve`: serve until SIGINT or SIGTERM.
    case serve(ParleyConfiguration)
    /// `parley healthcheck`: exit 0 if the Parley configured here answers `GET /api/health`.
    case healthcheck(ParleyConfiguration)
    /// `parley backup [--force] FILE`: a consistent copy of `PARLEY_DB`, taken while Parley runs.
    case backup(ParleyConfiguration, destination: String, replacing: Bool)
    /// `parley user add NAME [--admin] | passwd NAME | disable NAME | enable NAME | list`.
    case user(ParleyConfiguration, UserCommand)
    /// `parley migrate --from sqlite:PATH --to postgres://…`: a SQLite store copied into an empty PostgreSQL one.
    case migrate(MigrateCommand)

    /// Reads the command line; `arguments` exclude the program name.
    public init(environment: [String: String], arguments: [String]) throws(CommandLineError) {
        var rest = arguments
        let name = rest.first.flatMap { $0.hasPrefix("-") ? nil : $0 } ?? "serve"
        if rest.first == name { rest.removeFirst() }
        switch name {
        case "media-worker":
            // Was the decoding child up to issue 23; it is now its own executable, so `parley` links no decoder.
            throw .usage("media-worker is no longer a parley command: the decoding child is the "
                         + "`parley-media-worker` executable, which parley runs itself (PARLEY_MEDIA_WORKER)")
        case "serve":
            self = .serve(try Self.configuration(environment, rest))
        case "healthcheck":
            self = .healthcheck(try Self.configuration(environment, rest))
        case "backup":
            let operands = try Self.operands(rest, switches: ["--force"])
            guard operands.positional.count == 1, let destination = operands.positional.first, !destination.isEmpty else {
                throw .usage("backup needs exactly one FILE to write (usage: parley backup [--force] FILE)")
            }
            self = .backup(try Self.configuration(environment, operands.flags), destination: destination,
                           replacing: operands.switches.contains("--force"))
        case "user":
            let operands = try Self.operands(rest, switches: ["--admin"])
            switch UserCommand.parse(operands.positional, switches: operands.switches) {
            case .success(let command): self = .user(try Self.configuration(environment, operands.flags), command)
            case .failure(let usage): throw .usage(usage.description)
            }
        case "migrate":
            self = .migrate(try MigrateCommand.parse(rest, environment: environment))
        default:
            throw .usage("unknown command \(name) (commands: serve, healthcheck, backup FILE, user …, migrate …)")
        }
    }

    // MARK: - Parsing

    private static func configuration(_ environment: [String: String], _ flags: [String])
        throws(CommandLineError) -> ParleyConfiguration {
        do {
            return try ParleyConfiguration(environment: environment, arguments: flags)
        } catch {
            throw .configuration(error)
        }
    }

    /// Splits a command's arguments into its switches (flags without a value), its positional
    /// operands and the configuration flags (`--name value` or `--name=value`), kept in order.
    private static func operands(_ arguments: [String], switches known: Set<String>)
        throws(CommandLineError) -> (switches: Set<String>, positional: [String], flags: [String]) {
        var switches: Set<String> = []
        var positional: [String] = []
        var flags: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if known.contains(argument) {
                switches.insert(argument)
            } else if argument.hasPrefix("--") {
                flags.append(argument)
                if !argument.contains("=") {
                    guard index < arguments.count else { throw .configuration(.missingValue(argument)) }
                    flags.append(arguments[index])
                    index += 1
                }
            } else {
                positional.append(argument)
            }
        }
        return (switches, positional, flags)
    }
}

/// Why the command line cannot be run; one line, printed before `parley` exits 2.
public enum CommandLineError: Error, Equatable, CustomStringConvertible {
    case usage(String)
    case configuration(ConfigurationError)

    public var description: String {
        switch self {
        case .usage(let why): why
        case .configuration(let error): error.description
        }
    }
}
