import Foundation
import ParleyHTTP
import ParleyMedia
import ParleyProviders
import ParleyServer
import XCTest

/// Every setting of the README reaches its place; flags win over the environment; bad values are
/// refused with the setting's name.
final class ConfigurationTests: XCTestCase {
    /// Every row of README.md's configuration table (`| `PARLEY_X` | default | meaning |`) against the
    /// value the server actually starts with; a setting added to either side without the other fails.
    func testEveryDefaultInTheREADMEIsTheRealOne() throws {
        let readme = try String(contentsOf: TestParley.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let rows = Self.configurationTable(readme)
        XCTAssertGreaterThanOrEqual(rows.count, 30, "the README's configuration table was found")

        let server = try ParleyConfiguration(environment: [:], arguments: [])
        let none = try ProviderConfiguration(environment: [:])
        let openAI = try XCTUnwrap(ProviderConfiguration(environment: ["PARLEY_OPENAI_BASE_URL": "http://x/v1"]).openAI)
        let anthropic = try XCTUnwrap(ProviderConfiguration(environment: ["PARLEY_ANTHROPIC_API_KEY": "k"]).anthropic)
        let models = "from `GET {base}/models`"
        let actual: [String: String] = [
            "PARLEY_HOST": server.host,
            "PARLEY_PORT": "\(server.port)",
            "PARLEY_DB": server.databasePath,
            "PARLEY_DATABASE_URL": server.database?.url ?? "",
            "PARLEY_REDIS_URL": server.redis?.description ?? "",
            "PARLEY_REDIS_PREFIX": server.redisPrefix,
            "PARLEY_LEASE_SECONDS": Self.number(server.failover.lease),
            "PARLEY_FAILOVER": server.failover.continuing ? "continue" : "off",
            "PARLEY_PUBLIC": server.publicDirectory,
            "PARLEY_OPENAI_BASE_URL": none.openAI == nil ? "" : "set",
            "PARLEY_OPENAI_API_KEY": openAI.apiKey ?? "",
            "PARLEY_OPENAI_MODELS": openAI.models.isEmpty ? models : openAI.models.joined(separator: ","),
            "PARLEY_ANTHROPIC_BASE_URL": anthropic.baseURL,
            "PARLEY_ANTHROPIC_API_KEY": none.anthropic == nil ? "" : "set",
            "PARLEY_ANTHROPIC_MODELS": anthropic.models.joined(separator: ","),
            "PARLEY_DEMO_TOKENS_PER_SECOND": Self.number(none.demoTokensPerSecond),
            "PARLEY_VISION_MODELS": server.visionModels.patterns.joined(separator: ","),
            "PARLEY_UPSTREAM_CONNECT_TIMEOUT": Self.number(none.limits.connectTimeout),
            "PARLEY_UPSTREAM_IDLE_TIMEOUT": Self.number(none.limits.idleTimeout),
            "PARLEY_UPSTREAM_MAX_BYTES": "\(none.limits.maxResponseBytes)",
            "PARLEY_THREADS": "\(server.http.threadPoolSize)",
            "PARLEY_MAX_CONNECTIONS": "\(server.http.connectionLimit)",
            "PARLEY_MAX_BODY_BYTES": "\(server.http.maxBodyBytes)",
            // Derived defaults (nil: the HTTP layer applies the formula the README names).
            "PARLEY_MAX_DISCARD_BYTES": server.http.maxDiscardBytes.map { "\($0)" } ?? "4 × body limit",
            "PARLEY_MAX_FILE_BYTES": "\(server.maxFileBytes)",
            "PARLEY_MAX_USER_FILE_BYTES": "\(server.maxUserFileBytes)",
            "PARLEY_MAX_ATTACHMENTS": "\(server.maxAttachments)",
            "PARLEY_EXPORT_MAX_ATTACHMENT_BYTES": "\(server.exportMaxAttachmentBytes)",
            "PARLEY_MAX_IMPORT_BYTES": server.maxImportBytes.map { "\($0)" } ?? "1.5 × export limit",
            "PARLEY_MAX_UPLOADS": "\(server.http.maxConcurrentUploads)",
            "PARLEY_UPLOAD_DIR": server.http.uploadDirectory ?? "",
            "PARLEY_MAX_CONNECTIONS_PER_IP": server.http.connectionsPerAddress.map { "\($0)" } ?? "max connections / 4",
            "PARLEY_HEADER_TIMEOUT": Self.number(server.http.headerTimeout),
            "PARLEY_TRUSTED_PROXIES": server.http.trustedProxies.map(\.description).joined(separator: ","),
            // Extra names: on loopback the machine's own names are always allowed.
            "PARLEY_ALLOWED_HOSTS": server.http.originPolicy.allowedHosts
                .map { $0.subtracting(OriginPolicy.loopbackHosts).sorted().joined(separator: ",") } ?? "",
            "PARLEY_PUBLIC_URL": server.http.originPolicy.trustedOrigins.sorted().joined(separator: ","),
            "PARLEY_CONNECTION_MEMORY_BYTES": "\(server.http.connectionMemoryLimit)",
            "PARLEY_LISTEN_BACKLOG": "\(server.http.listenBacklog)",
            "PARLEY_SHUTDOWN_GRACE": Self.number(server.http.shutdownGracePeriod),
            "PARLEY_CONNECTION_TIMEOUT": Self.number(server.http.connectionTimeout),
            "PARLEY_HEARTBEAT_INTERVAL": Self.number(server.http.heartbeatInterval),
            "PARLEY_STREAM_BACKLOG_BYTES": "\(server.http.streamBacklogLimit)",
            "PARLEY_STREAM_BACKLOG_TOTAL_BYTES": "\(server.http.streamBacklogTotalLimit)",
            "PARLEY_FRAME_INTERVAL_MS": Self.milliseconds(server.generation.frameInterval),
            "PARLEY_FLUSH_INTERVAL_MS": Self.milliseconds(server.generation.flushInterval),
            "PARLEY_MAX_REPLY_BYTES": "\(server.generation.maxReplyBytes)",
            "PARLEY_MAX_GENERATIONS": "\(server.generation.maxConcurrent)",
            "PARLEY_MAX_GENERATIONS_PER_USER": "\(server.generation.maxConcurrentPerUser)",
            "PARLEY_CONTEXT_BUDGET_CHARS": "\(server.generation.contextBudgetCharacters)",
            "PARLEY_RETAIN_FINISHED_SECONDS": Self.number(server.generation.retainFinished),
            "PARLEY_MAX_TOOL_ROUNDS": "\(server.generation.maxToolRounds)",
            "PARLEY_MAX_TOOL_RESULT_BYTES": "\(server.generation.maxToolResultBytes)",
            "PARLEY_SURFACE_MAX_COMPONENTS": "\(server.generation.surfaces.maxComponents)",
            "PARLEY_SURFACE_MAX_STRING_BYTES": "\(server.generation.surfaces.maxStringBytes)",
            "PARLEY_SURFACE_MAX_DEPTH": "\(server.generation.surfaces.maxDepth)",
            "PARLEY_SURFACE_MAX_ACTION_BYTES": "\(server.generation.surfaces.maxActionBytes)",
            "PARLEY_MCP_CONFIG": server.mcp == nil ? "" : "set",
            "PARLEY_OPENAI_PREFILL": openAI.supportsPrefill ? "1" : "0",
            "PARLEY_ANTHROPIC_MAX_TOKENS": "\(anthropic.maxTokens)",
            "PARLEY_MAX_TITLE_CHARS": "\(server.input.maxTitleCharacters)",
            "PARLEY_MAX_SYSTEM_PROMPT_BYTES": "\(server.input.maxSystemPromptBytes)",
            "PARLEY_MAX_TOKENS_LIMIT": "\(server.input.maxTokensLimit)",
            "PARLEY_USAGE_MAX_DAYS": "\(server.input.maxUsageDays)",
            "PARLEY_OPENAI_KEEPALIVE_MS": Self.milliseconds(server.openAIKeepAlive),
            "PARLEY_OPENAI_MAX_BODY_BYTES": server.openAIMaxBodyBytes.map { "\($0)" } ?? "4/3 × file limit + body limit",
            "PARLEY_MAX_SEARCH_QUERY_CHARS": "\(server.input.maxSearchQueryCharacters)",
            "PARLEY_SEARCH_CANDIDATES": "\(server.input.searchCandidates)",
            "PARLEY_AUTH": server.accounts.mode == .local ? "off on loopback" : "on",
            "PARLEY_ADMIN_USER": server.accounts.bootstrapAdmin?.username ?? "",
            "PARLEY_ADMIN_PASSWORD": server.accounts.bootstrapAdmin == nil ? "" : "set",
            "PARLEY_SESSION_IDLE_SECONDS": Self.number(server.accounts.sessionIdle),
            "PARLEY_SESSION_LIFETIME_SECONDS": Self.number(server.accounts.sessionLifetime),
            "PARLEY_COOKIE_SECURE": server.accounts.secureCookie.map { $0 ? "on" : "off" } ?? "auto",
            "PARLEY_PASSWORD_MEMORY_KIB": "\(server.accounts.passwordMemoryKiB)",
            "PARLEY_LOGIN_ATTEMPTS": "\(server.accounts.loginAttempts)",
            "PARLEY_USER_MESSAGES_PER_MINUTE": "\(server.usage.messagesPerMinute(in: .team)) in team mode, "
                + "\(server.usage.messagesPerMinute(in: .local)) in local mode",
            "PARLEY_USER_DAILY_OUTPUT_TOKENS": "\(server.usage.dailyOutputTokens)",
            "PARLEY_MEMBER_MODELS": server.usage.memberModels?.joined(separator: ",") ?? "",
            "PARLEY_LISTED_MODELS_ONLY": "\(server.usage.listedModelsOnly(in: .team) ? "on" : "off") in team mode, "
                + "\(server.usage.listedModelsOnly(in: .local) ? "on" : "off") in local",
            "PARLEY_AUTH_HEADER": server.accounts.proxyHeader ?? "",
            "PARLEY_USER_EVENT_LOG": "\(server.userEventLogSize)",
            "PARLEY_MAX_STREAMS_PER_USER": "\(server.streams.maxStreamsPerUser)",
            "PARLEY_MAX_EXPORTS_PER_USER": "\(server.streams.maxExportsPerUser)",
            "PARLEY_TITLES": server.titles.rawValue,
            "PARLEY_IMAGE_MAX_EDGE": "\(server.media.imageMaxEdge)",
            "PARLEY_IMAGE_MAX_PIXELS": "\(server.media.imageMaxPixels)",
            "PARLEY_IMAGE_MAX_BYTES": "\(server.media.imageMaxBytes)",
            "PARLEY_PDF_MAX_PAGES": "\(server.media.pdfMaxPages)",
            "PARLEY_MEDIA_TIMEOUT": Self.number(server.media.timeout),
            "PARLEY_MEDIA_WORKERS": "\(server.media.workers)",
            "PARLEY_MEDIA_QUEUE": "\(server.media.queue)",
            "PARLEY_MEDIA_SPARES": "\(server.media.spares)",
            "PARLEY_MEDIA_MEMORY_BYTES": "\(server.media.memoryBytes)",
            "PARLEY_MEDIA_WORKER": server.media.workerExecutable == MediaSettings.besideRunningExecutable
                ? "`parley-media-worker` beside `parley`" : server.media.workerExecutable.path,
        ]
        for (name, documented) in rows {
            guard let value = actual[name] else {
                XCTFail("\(name) is in the README but this test does not know where its value lives")
                continue
            }
            XCTAssertEqual(value, Self.normalized(documented), "\(name): README says \(documented.debugDescription)")
        }
        for name in actual.keys where !rows.contains(where: { $0.name == name }) {
            XCTFail("\(name) is not in the README's configuration table")
        }
        XCTAssertEqual(server.http.publicDirectory, server.publicDirectory)
        XCTAssertEqual(server.http.host, server.host)
        XCTAssertEqual(server.http.port, server.port)
    }

    /// The rows `| `PARLEY_X` | default | meaning |` of the README, in order.
    static func configurationTable(_ readme: String) -> [(name: String, documented: String)] {
        readme.split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4, cells[1].hasPrefix("`PARLEY_"), cells[1].hasSuffix("`") else { return nil }
            return (String(cells[1].dropFirst().dropLast()), cells[2])
        }
    }

    /// A README default as the value it stands for: backticks removed, `64 MiB` (or KiB, GiB) in bytes, `cores` the
    /// processor count; any other text is kept as written.
    static func normalized(_ documented: String) -> String {
        let parts = documented.split(separator: " ")
        if parts.count == 2, let amount = Int(parts[0]) {
            switch parts[1] {
            case "KiB": return "\(amount << 10)"
            case "MiB": return "\(amount << 20)"
            case "GiB": return "\(amount << 30)"
            default: break
            }
        }
        if documented == "cores" { return "\(ProcessInfo.processInfo.activeProcessorCount)" }
        if documented.hasPrefix("`"), documented.hasSuffix("`"), documented.filter({ $0 == "`" }).count == 2 {
            return String(documented.dropFirst().dropLast())
        }
        return documented
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value))" : "\(value)"
    }

    private static func number(_ value: Duration) -> String {
        number(Double(value.components.seconds) + Double(value.components.attoseconds) / 1e18)
    }

    private static func milliseconds(_ value: Duration) -> String {
        "\(value.components.seconds * 1000 + value.components.attoseconds / 1_000_000_000_000_000)"
    }

    func testTheSecurityHeadersAreExactlyTheDocumentedOnes() throws {
        let configuration = try ParleyConfiguration(environment: [:], arguments: [])
        let headers = Dictionary(uniqueKeysWithValues: configuration.http.defaultHeaders)
        XCTAssertEqual(headers["Content-Security-Policy"],
                       "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
                       + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
        XCTAssertEqual(headers["Referrer-Policy"], "no-referrer")
        XCTAssertEqual(headers["X-Frame-Options"], "DENY")
    }

    func testEverySettingIsRead() throws {
        let configuration = try ParleyConfiguration(environment: [
            "PARLEY_HOST": "0.0.0.0", "PARLEY_PORT": "9001", "PARLEY_DB": "/tmp/x.db", "PARLEY_PUBLIC": "/srv/p",
            "PARLEY_THREADS": "3", "PARLEY_MAX_CONNECTIONS": "77", "PARLEY_MAX_BODY_BYTES": "2048",
            "PARLEY_CONNECTION_MEMORY_BYTES": "65536", "PARLEY_LISTEN_BACKLOG": "12", "PARLEY_SHUTDOWN_GRACE": "2",
            "PARLEY_CONNECTION_TIMEOUT": "30", "PARLEY_HEARTBEAT_INTERVAL": "5", "PARLEY_STREAM_BACKLOG_BYTES": "8192",
            "PARLEY_FRAME_INTERVAL_MS": "0", "PARLEY_FLUSH_INTERVAL_MS": "100", "PARLEY_MAX_REPLY_BYTES": "999",
            "PARLEY_MAX_GENERATIONS": "9", "PARLEY_MAX_GENERATIONS_PER_USER": "2",
            "PARLEY_CONTEXT_BUDGET_CHARS": "1234", "PARLEY_RETAIN_FINISHED_SECONDS": "7",
        ], arguments: [])
        XCTAssertEqual(configuration.http.host, "0.0.0.0")
        XCTAssertEqual(configuration.http.port, 9001)
        XCTAssertEqual(configuration.databasePath, "/tmp/x.db")
        XCTAssertEqual(configuration.http.publicDirectory, "/srv/p")
        XCTAssertEqual(configuration.http.threadPoolSize, 3)
        XCTAssertEqual(configuration.http.connectionLimit, 77)
        XCTAssertEqual(configuration.http.maxBodyBytes, 2048)
        XCTAssertEqual(configuration.http.connectionMemoryLimit, 65536)
        XCTAssertEqual(configuration.http.listenBacklog, 12)
        XCTAssertEqual(configuration.http.shutdownGracePeriod, 2)
        XCTAssertEqual(configuration.http.connectionTimeout, 30)
        XCTAssertEqual(configuration.http.heartbeatInterval, 5)
        XCTAssertEqual(configuration.http.streamBacklogLimit, 8192)
        XCTAssertEqual(configuration.generation.frameInterval, .zero)
        XCTAssertEqual(configuration.generation.flushInterval, .milliseconds(100))
        XCTAssertEqual(configuration.generation.maxReplyBytes, 999)
        XCTAssertEqual(configuration.generation.maxConcurrent, 9)
        XCTAssertEqual(configuration.generation.maxConcurrentPerUser, 2)
        XCTAssertEqual(configuration.generation.contextBudgetCharacters, 1234)
        XCTAssertEqual(configuration.generation.retainFinished, .seconds(7))
    }

    func testTheUploadSettingsAreReadAndTheFolderFollowsTheDatabase() throws {
        let configuration = try ParleyConfiguration(environment: [
            "PARLEY_DB": "/srv/parley/main.db", "PARLEY_MAX_FILE_BYTES": "1000", "PARLEY_MAX_UPLOADS": "3",
            "PARLEY_EXPORT_MAX_ATTACHMENT_BYTES": "4096", "PARLEY_MAX_IMPORT_BYTES": "8192",
        ], arguments: [])
        XCTAssertEqual(configuration.exportMaxAttachmentBytes, 4096)
        XCTAssertEqual(configuration.maxImportBytes, 8192)
        XCTAssertEqual(configuration.openAIBodyLimit, 1336 + configuration.http.maxBodyBytes,
                       "by default a file of PARLEY_MAX_FILE_BYTES as base64 (1000 bytes: 1336) on top of the API's body limit")
        let openAI = try ParleyConfiguration(environment: ["PARLEY_OPENAI_MAX_BODY_BYTES": "5000"], arguments: [])
        XCTAssertEqual(openAI.openAIMaxBodyBytes, 5000)
        XCTAssertEqual(openAI.openAIBodyLimit, 5000)
        XCTAssertEqual(configuration.maxFileBytes, 1000)
        XCTAssertEqual(configuration.http.maxConcurrentUploads, 3)
        XCTAssertEqual(configuration.http.uploadDirectory, "/srv/parley/.parley-uploads")
        XCTAssertEqual(ParleyConfiguration.uploadDirectory(besideDatabase: "parley.db"), "./.parley-uploads")
        let chosen = try ParleyConfiguration(environment: ["PARLEY_DB": "/srv/p.db"], arguments: ["--upload-dir", "/tmp/up"])
        XCTAssertEqual(chosen.http.uploadDirectory, "/tmp/up")
        for (name, value) in [("PARLEY_MAX_FILE_BYTES", "0"), ("PARLEY_MAX_FILE_BYTES", "2000000000"),
                              ("PARLEY_MAX_UPLOADS", "0"), ("PARLEY_MAX_UPLOADS", "x"),
                              ("PARLEY_OPENAI_MAX_BODY_BYTES", "0"), ("PARLEY_OPENAI_MAX_BODY_BYTES", "big")] {
            XCTAssertThrowsError(try ParleyConfiguration(environment: [name: value], arguments: []), "\(name)=\(value)")
        }
    }

    func testTheMediaLimitsAreReadAndBounded() throws {
        let configuration = try ParleyConfiguration(environment: [
            "PARLEY_IMAGE_MAX_EDGE": "1024", "PARLEY_IMAGE_MAX_PIXELS": "1000000", "PARLEY_IMAGE_MAX_BYTES": "500000",
            "PARLEY_PDF_MAX_PAGES": "20", "PARLEY_MEDIA_TIMEOUT": "2.5", "PARLEY_MEDIA_WORKERS": "4",
            "PARLEY_MEDIA_QUEUE": "0", "PARLEY_MEDIA_MEMORY_BYTES": "536870912", "PARLEY_MEDIA_SPARES": "3",
            "PARLEY_MEDIA_WORKER": "/opt/parley/parley-media-worker",
        ], arguments: [])
        let media = configuration.media
        XCTAssertEqual([media.imageMaxEdge, media.imageMaxPixels, media.imageMaxBytes, media.pdfMaxPages],
                       [1024, 1_000_000, 500_000, 20])
        XCTAssertEqual(media.timeout, .milliseconds(2500))
        XCTAssertEqual([media.workers, media.queue, media.memoryBytes, media.spares], [4, 0, 512 << 20, 3])
        XCTAssertEqual(media.workerExecutable.path, "/opt/parley/parley-media-worker")
        XCTAssertNil(media.validate())
        for (name, value) in [("PARLEY_IMAGE_MAX_EDGE", "8"), ("PARLEY_MEDIA_WORKERS", "0"),
                              ("PARLEY_MEDIA_MEMORY_BYTES", "1000"), ("PARLEY_MEDIA_TIMEOUT", "0"),
                              ("PARLEY_MEDIA_SPARES", "-1")] {
            XCTAssertThrowsError(try ParleyConfiguration(environment: [name: value], arguments: [])) { error in
                XCTAssertTrue("\(error)".contains(name), "\(error)")
            }
        }
    }

    func testTheStreamCapsAreReadAndBounded() throws {
        let configuration = try ParleyConfiguration(environment: [
            "PARLEY_MAX_STREAMS_PER_USER": "500", "PARLEY_MAX_EXPORTS_PER_USER": "3",
        ], arguments: [])
        XCTAssertEqual(configuration.streams.maxStreamsPerUser, 500)
        XCTAssertEqual(configuration.streams.maxExportsPerUser, 3)
        for (name, value) in [("PARLEY_MAX_STREAMS_PER_USER", "0"), ("PARLEY_MAX_EXPORTS_PER_USER", "-1"),
                              ("PARLEY_MAX_STREAMS_PER_USER", "many")] {
            XCTAssertThrowsError(try ParleyConfiguration(environment: [name: value], arguments: [])) { error in
                XCTAssertTrue("\(error)".contains(name), "\(error)")
            }
        }
    }

    func testUsageAndProxySettingsAreRead() throws {
        let configuration = try ParleyConfiguration(environment: [
            "PARLEY_USER_MESSAGES_PER_MINUTE": "7", "PARLEY_USER_DAILY_OUTPUT_TOKENS": "5000",
            "PARLEY_MEMBER_MODELS": "openai:a, b ,", "PARLEY_AUTH_HEADER": "Remote-User",
            "PARLEY_TRUSTED_PROXIES": "10.0.0.0/8, ::1",
        ], arguments: [])
        XCTAssertEqual(configuration.usage.messagesPerMinute(in: .team), 7)
        XCTAssertEqual(configuration.usage.messagesPerMinute(in: .local), 7, "a value that is set holds in both modes")
        XCTAssertEqual(configuration.usage.dailyOutputTokens, 5000)
        XCTAssertEqual(configuration.usage.memberModels, ["openai:a", "b"])
        XCTAssertEqual(configuration.accounts.proxyHeader, "Remote-User")
        XCTAssertEqual(configuration.http.trustedProxies.map(\.description), ["10.0.0.0/8", "::1/128"])
        let refused: [[String: String]] = [
            ["PARLEY_AUTH_HEADER": "Remote-User"],  // no trusted proxy: the header could come from anyone
            ["PARLEY_AUTH_HEADER": "Remote User", "PARLEY_TRUSTED_PROXIES": "127.0.0.1"],
            ["PARLEY_TRUSTED_PROXIES": "proxy.example.org"],
            ["PARLEY_TRUSTED_PROXIES": "10.0.0.0/40"],
            ["PARLEY_USER_MESSAGES_PER_MINUTE": "0"],
            ["PARLEY_USER_DAILY_OUTPUT_TOKENS": "-1"],
        ]
        for environment in refused {
            XCTAssertThrowsError(try ParleyConfiguration(environment: environment, arguments: []), "\(environment)") {
                let error = "\($0)"
                XCTAssertTrue(environment.keys.contains { error.contains($0) }, "the error names the setting: \(error)")
            }
        }
    }

    func testToolSettingsAreReadAndBoundedAndABadMCPFileRefusesToStart() throws {
        let configuration = try ParleyConfiguration(environment: [
            "PARLEY_MAX_TOOL_ROUNDS": "3", "PARLEY_MAX_TOOL_RESULT_BYTES": "4096",
        ], arguments: [])
        XCTAssertEqual(configuration.generation.maxToolRounds, 3)
        XCTAssertEqual(configuration.generation.maxToolResultBytes, 4096)
        let surfaces = try ParleyConfiguration(environment: [
            "PARLEY_SURFACE_MAX_COMPONENTS": "50", "PARLEY_SURFACE_MAX_STRING_BYTES": "1024",
            "PARLEY_SURFACE_MAX_DEPTH": "12", "PARLEY_SURFACE_MAX_ACTION_BYTES": "4096",
        ], arguments: []).generation.surfaces
        XCTAssertEqual([surfaces.maxComponents, surfaces.maxStringBytes, surfaces.maxDepth, surfaces.maxActionBytes],
                       [50, 1024, 12, 4096])
        for (name, value) in [("PARLEY_MAX_TOOL_ROUNDS", "0"), ("PARLEY_MAX_TOOL_RESULT_BYTES", "-5"),
                              ("PARLEY_MAX_TOOL_ROUNDS", "lots"), ("PARLEY_SURFACE_MAX_COMPONENTS", "0"),
                              ("PARLEY_SURFACE_MAX_STRING_BYTES", "1"), ("PARLEY_SURFACE_MAX_DEPTH", "1000"),
                              ("PARLEY_SURFACE_MAX_ACTION_BYTES", "x")] {
            XCTAssertThrowsError(try ParleyConfiguration(environment: [name: value], arguments: [])) { error in
                XCTAssertTrue("\(error)".contains(name), "\(error)")
            }
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mcp-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"mcpServers": {"docs": {"url": "http://127.0.0.1:9/mcp", "timeout": -1}}}"#.utf8).write(to: file)
        XCTAssertThrowsError(try ParleyConfiguration(environment: ["PARLEY_MCP_CONFIG": file.path], arguments: [])) { error in
            let line = "\(error)"
            XCTAssertTrue(line.contains("server 'docs'") && line.contains("'timeout'"), line)
            XCTAssertFalse(line.contains("\n"), "one line")
        }
        try Data(#"{"mcpServers": {"docs": {"url": "http://127.0.0.1:9/mcp", "headers": {"A": "${SECRET_X}"}}}}"#.utf8)
            .write(to: file)
        let read = try ParleyConfiguration(environment: ["PARLEY_MCP_CONFIG": file.path, "SECRET_X": "s3cret",
                                                         "PATH": "/usr/bin", "OTHER": "x"], arguments: [])
        XCTAssertEqual(read.mcp?.servers.map(\.name), ["docs"])
        XCTAssertEqual(read.mcpEnvironment, ["PATH": "/usr/bin"], "a stdio server gets PATH and HOME only")
    }

    func testFlagsWinOverTheEnvironment() throws {
        let configuration = try ParleyConfiguration(environment: ["PARLEY_PORT": "1", "PARLEY_MAX_BODY_BYTES": "10"],
                                                    arguments: ["--port", "2", "--max-body-bytes=20"])
        XCTAssertEqual(configuration.port, 2)
        XCTAssertEqual(configuration.http.maxBodyBytes, 20)
        XCTAssertEqual(configuration.settings["PARLEY_PORT"], "2")
    }

    func testBadValuesNameTheSetting() {
        XCTAssertThrowsError(try ParleyConfiguration(environment: ["PARLEY_PORT": "70000"], arguments: [])) {
            XCTAssertTrue("\($0)".contains("PARLEY_PORT"))
        }
        XCTAssertThrowsError(try ParleyConfiguration(environment: ["PARLEY_HEARTBEAT_INTERVAL": "soon"], arguments: []))
        XCTAssertThrowsError(try ParleyConfiguration(environment: [:], arguments: ["port"]))
        XCTAssertThrowsError(try ParleyConfiguration(environment: [:], arguments: ["--port"]))
    }

    /// PARLEY_DATABASE_URL picks PostgreSQL over PARLEY_DB; a value that is not a postgres:// URL is refused
    /// naming the setting, and neither the error nor the location's description shows the password.
    func testTheDatabaseURLIsReadAndItsPasswordNeverShown() throws {
        let chosen = try ParleyConfiguration(
            environment: ["PARLEY_DATABASE_URL": "postgresql://parley:s3cret@db:5432/parley", "PARLEY_DB": "/x.db"],
            arguments: [])
        XCTAssertEqual(chosen.database?.url, "postgresql://parley:s3cret@db:5432/parley")
        XCTAssertEqual(chosen.database?.description, "postgresql://parley:***@db:5432/parley")
        XCTAssertNil(try ParleyConfiguration(environment: ["PARLEY_DATABASE_URL": " "], arguments: []).database)
        for bad in ["mysql://parley:s3cret@db/parley", "parley:s3cret@db", "postgres://"] {
            XCTAssertThrowsError(try ParleyConfiguration(environment: ["PARLEY_DATABASE_URL": bad], arguments: [])) {
                XCTAssertTrue("\($0)".contains("PARLEY_DATABASE_URL"), "\($0)")
                XCTAssertFalse("\($0)".contains("s3cret"), "\($0)")
            }
        }
    }
}
