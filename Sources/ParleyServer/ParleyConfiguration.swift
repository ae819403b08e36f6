import Foundation
import ParleyGeneration
import ParleyHTTP

/// Everything Parley can be told at start-up. Each value comes from an environment variable
/// (`PARLEY_PORT`) or the command-line flag of the same name (`--port 9000`), and the flag wins.
/// Provider settings (`PARLEY_OPENAI_*`, `PARLEY_ANTHROPIC_*`, …) are passed through to the
/// providers in `settings`.
public struct ParleyConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var databasePath = "./parley.db"
    public var publicDirectory = "./Public"
    public var http = HTTPServerConfiguration()
    public var generation = GenerationLimits()
    /// The merged environment and flags, for the providers' own settings.
    public var settings: [String: String] = [:]

    public init() {
        http.defaultHeaders = Self.securityHeaders
    }

    /// Headers sent with every response: the page may load only its own files, never be framed.
    public static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy",
         "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
         + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
    ]

    /// Reads the configuration; `arguments` are the command line without the program name.
    public init(environment: [String: String], arguments: [String]) throws(ConfigurationError) {
        self.init()
        var settings = environment.filter { $0.key.hasPrefix("PARLEY_") }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("--") else { throw .unknownArgument(argument) }
            var name = String(argument.dropFirst(2))
            var value: String
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            } else {
                index += 1
                guard index < arguments.count else { throw .missingValue(argument) }
                value = arguments[index]
            }
            settings["PARLEY_" + name.uppercased().replacingOccurrences(of: "-", with: "_")] = value
            index += 1
        }
        self.settings = settings
        try apply(settings)
    }

    // MARK: - Reading values

    private mutating func apply(_ values: [String: String]) throws(ConfigurationError) {
        let read = SettingReader(values: values)
        host = values["PARLEY_HOST"] ?? host
        port = try read.integer("PARLEY_PORT", default: port, range: 0...65535)
        databasePath = values["PARLEY_DB"] ?? databasePath
        publicDirectory = values["PARLEY_PUBLIC"] ?? publicDirectory

        http.host = host
        http.port = port
        http.publicDirectory = publicDirectory
        http.threadPoolSize = try read.integer("PARLEY_THREADS", default: http.threadPoolSize, range: 1...256)
        http.connectionLimit = try read.integer("PARLEY_MAX_CONNECTIONS", default: http.connectionLimit,
                                                range: 1...1_000_000)
        http.maxBodyBytes = try read.integer("PARLEY_MAX_BODY_BYTES", default: http.maxBodyBytes,
                                             range: 1...(1 << 30))
        http.connectionMemoryLimit = try read.integer("PARLEY_CONNECTION_MEMORY_BYTES",
                                                      default: http.connectionMemoryLimit, range: 4096...(64 << 20))
        http.listenBacklog = try read.integer("PARLEY_LISTEN_BACKLOG", default: http.listenBacklog, range: 1...65535)
        http.shutdownGracePeriod = try read.seconds("PARLEY_SHUTDOWN_GRACE", default: http.shutdownGracePeriod)
        http.connectionTimeout = try read.seconds("PARLEY_CONNECTION_TIMEOUT", default: http.connectionTimeout)
        http.heartbeatInterval = try read.seconds("PARLEY_HEARTBEAT_INTERVAL", default: http.heartbeatInterval)
        http.streamBacklogLimit = try read.integer("PARLEY_STREAM_BACKLOG_BYTES", default: http.streamBacklogLimit,
                                                   range: 1024...(1 << 30))
        http.streamBacklogTotalLimit = try read.integer("PARLEY_STREAM_BACKLOG_TOTAL_BYTES",
                                                        default: http.streamBacklogTotalLimit,
                                                        range: (64 << 10)...(1 << 40))

        generation.frameInterval = try read.milliseconds("PARLEY_FRAME_INTERVAL_MS", default: generation.frameInterval)
        generation.flushInterval = try read.milliseconds("PARLEY_FLUSH_INTERVAL_MS", default: generation.flushInterval)
        generation.maxReplyBytes = try read.integer("PARLEY_MAX_REPLY_BYTES", default: generation.maxReplyBytes,
                                                    range: 1...(1 << 30))
        generation.maxConcurrent = try read.integer("PARLEY_MAX_GENERATIONS", default: generation.maxConcurrent,
                                                    range: 1...100_000)
        generation.maxConcurrentPerUser = try read.integer("PARLEY_MAX_GENERATIONS_PER_USER",
                                                           default: generation.maxConcurrentPerUser,
                                                           range: 1...100_000)
        generation.retainFinished = .seconds(try read.integer("PARLEY_RETAIN_FINISHED_SECONDS",
                                                              default: Int(generation.retainFinished.components.seconds),
                                                              range: 0...86_400))
        generation.contextBudgetCharacters = try read.integer("PARLEY_CONTEXT_BUDGET_CHARS",
                                                              default: generation.contextBudgetCharacters,
                                                              range: 1...100_000_000)
    }
}

/// Why the configuration could not be read; printed by `parley` before it exits.
public enum ConfigurationError: Error, Equatable, CustomStringConvertible {
    case unknownArgument(String)
    case missingValue(String)
    case invalidValue(name: String, value: String, expected: String)

    public var description: String {
        switch self {
        case .unknownArgument(let argument): "unknown argument \(argument) (flags look like --port 8080)"
        case .missingValue(let flag): "\(flag) needs a value"
        case .invalidValue(let name, let value, let expected): "\(name)=\(value) is not \(expected)"
        }
    }
}

/// Typed reads of string settings with the name in every error.
private struct SettingReader {
    let values: [String: String]

    func integer(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let raw = values[name] else { return fallback }
        guard let value = Int(raw.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw .invalidValue(name: name, value: raw,
                                expected: "an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    func seconds(_ name: String, default fallback: Double) throws(ConfigurationError) -> Double {
        guard let raw = values[name] else { return fallback }
        guard let value = Double(raw), value > 0, value <= 86_400 else {
            throw .invalidValue(name: name, value: raw, expected: "a number of seconds above 0")
        }
        return value
    }

    func milliseconds(_ name: String, default fallback: Duration) throws(ConfigurationError) -> Duration {
        .milliseconds(try integer(name, default: Int(fallback.milliseconds), range: 0...3_600_000))
    }
}

extension Duration {
    /// Whole milliseconds (for printing and settings).
    var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
