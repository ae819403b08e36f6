import Foundation
import ParleyAPI
import ParleyAccounts
import ParleyConversations
import ParleyGeneration
import ParleyHTTP
import ParleyMCP
import ParleyMedia
import ParleyPrimitives
import ParleyProviders
import ParleyQuotas
import ParleyRedis
import ParleyStore

/// Everything Parley can be told at start-up. Each value comes from an environment variable
/// (`PARLEY_PORT`) or the command-line flag of the same name (`--port 9000`), and the flag wins.
/// Provider settings (`PARLEY_OPENAI_*`, `PARLEY_ANTHROPIC_*`, …) are passed through to the
/// providers in `settings`.
public struct ParleyConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var databasePath = "./parley.db"
    /// PARLEY_DATABASE_URL: a PostgreSQL store instead of the SQLite file; wins over `databasePath`.
    public var database: PostgresLocation?
    /// PARLEY_REDIS_URL: several nodes share limits and notifications through this Redis (needs `database`).
    public var redis: RedisURL?
    /// PARLEY_REDIS_PREFIX: the start of every key Parley writes in Redis (one Redis may serve several clusters).
    public var redisPrefix = "parley:"
    /// PARLEY_LEASE_SECONDS and PARLEY_FAILOVER: how a dead node's replies are found and what becomes of them.
    public var failover = FailoverSettings()
    public var publicDirectory = "./Public"
    public var http = HTTPServerConfiguration()
    /// The largest upload (PARLEY_MAX_FILE_BYTES; at most 10^9 bytes, SQLite's default blob limit).
    public var maxFileBytes = 20 << 20
    /// Every file one user keeps, together (PARLEY_MAX_USER_FILE_BYTES), and files on one message.
    public var maxUserFileBytes: Int64 = 1 << 30
    public var maxAttachments = 10
    /// Bytes one export embeds, import body limit (nil: 1.5 ×, so whatever Parley exports it imports).
    public var exportMaxAttachmentBytes = 64 << 20
    public var maxImportBytes: Int?
    public var generation = GenerationLimits()
    public var input = InputLimits()
    /// How often an OpenAI-style stream with nothing new writes `: keep-alive` (PARLEY_OPENAI_KEEPALIVE_MS):
    /// a write is how a client that left is noticed (and its reply stopped) while the model is quiet.
    public var openAIKeepAlive: Duration = .seconds(1)
    /// POST /v1/chat/completions' body limit (PARLEY_OPENAI_MAX_BODY_BYTES); nil: see `openAIBodyLimit`.
    public var openAIMaxBodyBytes: Int?
    /// Local mode (one implicit user) or team mode (accounts); see `AccountSettings`.
    public var accounts = AccountSettings()
    /// Per-user quotas and the members' models; see `UsagePolicy`.
    public var usage = UsagePolicy()
    /// Notifications kept per user for tabs that reconnect (`GET /api/events`); further behind gets `resync`.
    public var userEventLogSize = 256
    /// Open streams and concurrent exports per user (PARLEY_MAX_STREAMS_PER_USER, PARLEY_MAX_EXPORTS_PER_USER).
    public var streams = StreamLimits()
    /// How a conversation gets its title after the first answer (`PARLEY_TITLES`).
    public var titles = TitleSource.model
    /// Which models are sent images (PARLEY_VISION_MODELS: ids or `*` patterns); the demo model always is.
    public var visionModels = VisionModels()
    /// The merged environment and flags, for the providers' own settings.
    public var settings: [String: String] = [:]
    /// The MCP servers of `PARLEY_MCP_CONFIG` (nil: none; `${VAR}` from the environment; a bad file: `.mcp`).
    public var mcp: MCPConfiguration?
    /// What a stdio MCP server gets of Parley's environment besides its own `env`: PATH and HOME.
    public var mcpEnvironment: [String: String] = [:]
    /// Uploaded files' limits and workers (PARLEY_IMAGE_*, PARLEY_PDF_MAX_PAGES, PARLEY_MEDIA_*).
    public var media = MediaSettings()

    public init() {
        http.defaultHeaders = Self.securityHeaders
    }

    /// Headers sent with every response: the page may load only its own files, never be framed. Images
    /// may also be `blob:` URLs: the composer previews an attached image from the file itself
    /// (URL.createObjectURL), before it is uploaded; a blob URL is made by the page, never fetched.
    public static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy",
         "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
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
        mcpEnvironment = environment.filter { $0.key == "PATH" || $0.key == "HOME" }
        if let path = settings["PARLEY_MCP_CONFIG"], !path.isEmpty {
            do {
                mcp = try MCPConfiguration.load(path: path, environment: environment)
            } catch {
                throw .mcp(error.description)
            }
        }
    }

    // MARK: - Reading values

    private mutating func apply(_ values: [String: String]) throws(ConfigurationError) {
        let read = SettingReader(values: values)
        host = values["PARLEY_HOST"] ?? host
        port = try read.integer("PARLEY_PORT", default: port, range: 0...65535)
        databasePath = values["PARLEY_DB"] ?? databasePath
        database = try Self.databaseLocation(read: read)
        redis = try Self.redisLocation(read: read, database: database)
        redisPrefix = values["PARLEY_REDIS_PREFIX"].flatMap { $0.isEmpty ? nil : $0 } ?? redisPrefix
        failover = try Self.failoverSettings(read: read)
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
        http.maxDiscardBytes = try read.optionalInteger("PARLEY_MAX_DISCARD_BYTES", range: 0...(1 << 40))
        maxFileBytes = try read.integer("PARLEY_MAX_FILE_BYTES", default: maxFileBytes, range: 1...1_000_000_000)
        maxUserFileBytes = Int64(try read.integer("PARLEY_MAX_USER_FILE_BYTES", default: Int(maxUserFileBytes),
                                                  range: 1...(1 << 50)))
        maxAttachments = try read.integer("PARLEY_MAX_ATTACHMENTS", default: maxAttachments, range: 1...100)
        exportMaxAttachmentBytes = try read.integer("PARLEY_EXPORT_MAX_ATTACHMENT_BYTES", default: 64 << 20, range: 1...1 << 40)
        maxImportBytes = try read.optionalInteger("PARLEY_MAX_IMPORT_BYTES", range: 1...(1 << 42))
        http.maxConcurrentUploads = try read.integer("PARLEY_MAX_UPLOADS", default: http.maxConcurrentUploads,
                                                     range: 1...100_000)
        http.uploadDirectory = values["PARLEY_UPLOAD_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? Self.uploadDirectory(besideDatabase: databasePath)
        http.headerTimeout = try read.seconds("PARLEY_HEADER_TIMEOUT", default: http.headerTimeout)
        http.connectionsPerAddress = try read.optionalInteger("PARLEY_MAX_CONNECTIONS_PER_IP", range: 1...1_000_000)
        http.trustedProxies = try read.addressRanges("PARLEY_TRUSTED_PROXIES")
        http.originPolicy = try Self.originPolicy(host: host, read: read)

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
        generation.maxToolRounds = try read.integer("PARLEY_MAX_TOOL_ROUNDS", default: generation.maxToolRounds,
                                                    range: 1...1_000)
        generation.maxToolResultBytes = try read.integer("PARLEY_MAX_TOOL_RESULT_BYTES", default: 64 << 10, range: 1...(64 << 20))
        generation.surfaces = try Self.surfaceLimits(read: read)

        input.maxTitleCharacters = try read.integer("PARLEY_MAX_TITLE_CHARS", default: input.maxTitleCharacters,
                                                    range: 1...100_000)
        input.maxSystemPromptBytes = try read.integer("PARLEY_MAX_SYSTEM_PROMPT_BYTES",
                                                      default: input.maxSystemPromptBytes, range: 1...(64 << 20))
        userEventLogSize = try read.integer("PARLEY_USER_EVENT_LOG", default: userEventLogSize, range: 1...100_000)
        streams.maxStreamsPerUser = try read.integer("PARLEY_MAX_STREAMS_PER_USER", default: streams.maxStreamsPerUser,
                                                     range: 1...1_000_000)
        streams.maxExportsPerUser = try read.integer("PARLEY_MAX_EXPORTS_PER_USER", default: streams.maxExportsPerUser,
                                                     range: 1...10_000)
        if let raw = values["PARLEY_TITLES"], !raw.isEmpty {
            guard let source = TitleSource(rawValue: raw.lowercased()) else {
                throw .invalidValue(name: "PARLEY_TITLES", value: raw, expected: "model, words or off")
            }
            titles = source
        }
        input.maxTokensLimit = try read.integer("PARLEY_MAX_TOKENS_LIMIT", default: input.maxTokensLimit,
                                                range: 1...100_000_000)
        input.maxUsageDays = try read.integer("PARLEY_USAGE_MAX_DAYS", default: input.maxUsageDays, range: 1...100_000)
        openAIKeepAlive = try read.milliseconds("PARLEY_OPENAI_KEEPALIVE_MS", default: openAIKeepAlive)
        openAIMaxBodyBytes = try read.optionalInteger("PARLEY_OPENAI_MAX_BODY_BYTES", range: 1...(1 << 40))
        input.maxSearchQueryCharacters = try read.integer("PARLEY_MAX_SEARCH_QUERY_CHARS",
                                                          default: input.maxSearchQueryCharacters, range: 3...10_000)
        input.searchCandidates = try read.integer("PARLEY_SEARCH_CANDIDATES", default: input.searchCandidates,
                                                  range: 1...10_000_000)
        accounts = try Self.accountSettings(host: host, read: read)
        usage = try Self.usagePolicy(read: read)
        media = try Self.mediaSettings(read: read)
        visionModels = VisionModels(read.list("PARLEY_VISION_MODELS"))
        accounts.proxyHeader = try Self.proxyHeader(read: read, trustedProxies: http.trustedProxies)
    }
}

extension ParleyConfiguration {
    /// PARLEY_UPLOAD_DIR's default: `.parley-uploads` in the database's folder, so uploads land on the
    /// disk that will store them (the move into the files database stays on one file system).
    public static func uploadDirectory(besideDatabase databasePath: String) -> String {
        let folder = (databasePath as NSString).deletingLastPathComponent
        return (folder.isEmpty ? "." : folder) + "/.parley-uploads"
    }

    /// Team mode when PARLEY_AUTH=on, and by default off loopback (a network address without
    /// accounts must be asked for with PARLEY_AUTH=off); local mode otherwise.
    fileprivate static func accountSettings(host: String, read: SettingReader) throws(ConfigurationError)
        -> AccountSettings {
        var settings = AccountSettings()
        switch try read.switchValue("PARLEY_AUTH") {
        case true?: settings.mode = .team
        case false?: settings.mode = .local
        case nil: settings.mode = isLoopback(host) ? .local : .team
        }
        let adminUser = read.values["PARLEY_ADMIN_USER"] ?? ""
        let adminPassword = read.values["PARLEY_ADMIN_PASSWORD"] ?? ""
        if !adminUser.isEmpty || !adminPassword.isEmpty {
            guard !adminUser.isEmpty, adminPassword.count >= 8 else {
                throw .invalidValue(name: "PARLEY_ADMIN_USER/PARLEY_ADMIN_PASSWORD", value: adminUser,
                                    expected: "both set, with a password of at least 8 characters")
            }
            settings.bootstrapAdmin = (adminUser, adminPassword)
        }
        let year = 366 * 86_400
        settings.sessionIdle = TimeInterval(try read.integer("PARLEY_SESSION_IDLE_SECONDS",
                                                             default: Int(settings.sessionIdle), range: 1...year))
        settings.sessionLifetime = TimeInterval(try read.integer("PARLEY_SESSION_LIFETIME_SECONDS",
                                                                 default: Int(settings.sessionLifetime), range: 1...year))
        settings.secureCookie = try read.switchValue("PARLEY_COOKIE_SECURE")
        settings.passwordMemoryKiB = try read.integer("PARLEY_PASSWORD_MEMORY_KIB", default: settings.passwordMemoryKiB,
                                                      range: 8...(4 << 20))
        settings.loginAttempts = try read.integer("PARLEY_LOGIN_ATTEMPTS", default: settings.loginAttempts,
                                                  range: 1...100_000)
        return settings
    }

    fileprivate static func usagePolicy(read: SettingReader) throws(ConfigurationError) -> UsagePolicy {
        var policy = UsagePolicy()
        policy.messagesPerMinute = try read.optionalInteger("PARLEY_USER_MESSAGES_PER_MINUTE", range: 1...1_000_000)
        policy.dailyOutputTokens = try read.integer("PARLEY_USER_DAILY_OUTPUT_TOKENS", default: 0,
                                                    range: 0...1_000_000_000_000)
        let models = read.list("PARLEY_MEMBER_MODELS")
        policy.memberModels = models.isEmpty ? nil : models
        policy.listedModelsOnly = try read.switchValue("PARLEY_LISTED_MODELS_ONLY")
        return policy
    }

    /// PARLEY_AUTH_HEADER: a header name, believed only from PARLEY_TRUSTED_PROXIES, so it needs them.
    fileprivate static func proxyHeader(read: SettingReader, trustedProxies: [AddressRange])
        throws(ConfigurationError) -> String? {
        guard let name = read.values["PARLEY_AUTH_HEADER"]?.trimmingCharacters(in: .whitespaces), !name.isEmpty else {
            return nil
        }
        let allowed = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".unicodeScalars
        guard name.unicodeScalars.allSatisfy(allowed.contains) else {
            throw .invalidValue(name: "PARLEY_AUTH_HEADER", value: name, expected: "a header name such as Remote-User")
        }
        guard !trustedProxies.isEmpty else {
            throw .invalidValue(name: "PARLEY_AUTH_HEADER", value: name,
                                expected: "set without PARLEY_TRUSTED_PROXIES (the header is believed only from them)")
        }
        return name
    }

    /// Whether `host` is a loopback address: only this machine can connect, so the `Host` header is the
    /// one thing that tells a DNS-rebinding page from the user's own.
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// On loopback, `Host` must name this machine (or a name the operator added); on other addresses
    /// any `Host` is answered unless PARLEY_ALLOWED_HOSTS lists them. Writes are allowed from the
    /// request's own origin and from PARLEY_PUBLIC_URL.
    fileprivate static func originPolicy(host: String, read: SettingReader) throws(ConfigurationError) -> OriginPolicy {
        var hosts = Set(read.list("PARLEY_ALLOWED_HOSTS").map { name in
            OriginPolicy.hostName(name) ?? name.lowercased()
        })
        var origins: Set<String> = []
        if let publicURL = try read.publicURL("PARLEY_PUBLIC_URL") {
            hosts.insert(publicURL.host)
            origins.insert(publicURL.origin)
        }
        if isLoopback(host) {
            return OriginPolicy(allowedHosts: hosts.union(OriginPolicy.loopbackHosts), trustedOrigins: origins)
        }
        return OriginPolicy(allowedHosts: read.list("PARLEY_ALLOWED_HOSTS").isEmpty ? nil : hosts,
                            trustedOrigins: origins)
    }
}

/// Why the configuration could not be read; printed by `parley` before it exits.
public enum ConfigurationError: Error, Equatable, CustomStringConvertible {
    case unknownArgument(String)
    case missingValue(String)
    case invalidValue(name: String, value: String, expected: String)
    /// The MCP configuration file is unreadable or wrong: one line naming the server and the field.
    case mcp(String)
    /// Two settings that do not go together, as one line saying why.
    case combination(String)

    public var description: String {
        switch self {
        case .mcp(let line), .combination(let line): line
        case .unknownArgument(let argument): "unknown argument \(argument) (flags look like --port 8080)"
        case .missingValue(let flag): "\(flag) needs a value"
        case .invalidValue(let name, let value, let expected): "\(name)=\(value) is not \(expected)"
        }
    }
}

/// Typed reads of string settings with the name in every error.
struct SettingReader {
    let values: [String: String]

    func integer(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let raw = values[name] else { return fallback }
        guard let value = Int(raw.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw .invalidValue(name: name, value: raw,
                                expected: "an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// `on`/`off` (also true/false, 1/0, yes/no); nil when unset.
    func switchValue(_ name: String) throws(ConfigurationError) -> Bool? {
        guard let raw = values[name], !raw.isEmpty else { return nil }
        switch raw.lowercased() {
        case "on", "true", "1", "yes": return true
        case "off", "false", "0", "no": return false
        default: throw .invalidValue(name: name, value: raw, expected: "on or off")
        }
    }

    func optionalInteger(_ name: String, range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard values[name] != nil else { return nil }
        return try integer(name, default: 0, range: range)
    }

    /// A comma-separated list; blanks are dropped.
    func list(_ name: String) -> [String] {
        (values[name] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// A comma-separated list of CIDRs and single addresses (`10.0.0.0/8, 127.0.0.2, ::1/128`).
    func addressRanges(_ name: String) throws(ConfigurationError) -> [AddressRange] {
        var ranges: [AddressRange] = []
        for item in list(name) {
            guard let range = AddressRange(item) else {
                throw .invalidValue(name: name, value: item,
                                    expected: "an IPv4 or IPv6 address or CIDR such as 10.0.0.0/8 or ::1/128")
            }
            ranges.append(range)
        }
        return ranges
    }

    /// An http(s) URL's host name (as `OriginPolicy` compares them) and origin.
    func publicURL(_ name: String) throws(ConfigurationError) -> (host: String, origin: String)? {
        guard let raw = values[name], !raw.isEmpty else { return nil }
        guard let url = URLComponents(string: raw), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", var host = url.host?.lowercased(), !host.isEmpty else {
            throw .invalidValue(name: name, value: raw, expected: "an http(s) URL such as https://chat.example.org")
        }
        if host.contains(":"), !host.hasPrefix("[") { host = "[" + host + "]" }
        let port = url.port.map { ":\($0)" } ?? ""
        return (host, scheme + "://" + host + port)
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
