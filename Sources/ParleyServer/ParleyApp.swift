import Foundation
import ParleyAPI
import ParleyAccounts
import ParleyCluster
import ParleyConversations
import ParleyEvents
import ParleyFiles
import ParleyGeneration
import ParleyHTTP
import ParleyMarkdown
import ParleyOpenAICompat
import ParleyProviders
import ParleyQuotas
import ParleyMCP
import ParleyMedia
import ParleyStore
import ParleyTools
import ParleyTransfer
import ParleyUpstream

/// Module ParleyServer: configuration, the routes in one place, every part wired together. It must
/// never know argv or signals (ParleyCLI and `parley` do), nor hold a feature's rules.
///
/// A running Parley: the store, the providers, the live generations and the HTTP server, wired
/// together. `parley` (main) and the integration tests start exactly this.
public final class ParleyApp: Sendable {
    public let configuration: ParleyConfiguration
    public let store: Store
    public let generations: Generations
    private let server: HTTPServer
    /// The MCP servers of `PARLEY_MCP_CONFIG`, connected by `start`, stopped by `shutdown`.
    private let mcpServers: MCPServers?
    /// Every user's notifications and open user event streams (`GET /api/events`).
    let userEvents: UserEventHub
    /// With several nodes (PARLEY_REDIS_URL): what they share through Redis, and this node's reader
    /// of the cluster's notifications (started by `start`, stopped by `shutdown`).
    let shared: SharedState?
    private let userEventFollower: UserEventFollower?
    /// With several nodes: replies' events through Redis Streams (any node serves any reply's stream).
    let replyRelay: RedisReplyRelay?
    /// With several nodes: renews this node's leases and takes over dead nodes' replies.
    private let leases: LeaseKeeper?
    /// Every open stream and export, per user and credential (`PARLEY_MAX_STREAMS_PER_USER`).
    let streams: OpenStreams
    /// The conversation namings in progress (tests wait on them).
    let titles: TitleJobs
    /// Decodes uploads in `parley-media-worker` children; `shutdown` ends its waiting spares.
    private let media: MediaProcessor
    /// Every route's method and pattern (`/api/conversations/:id`), for the OpenAPI document's test.
    let routes: [(method: String, pattern: String)]

    /// Opens the store (marking replies cut by a crash as `interrupted`, collecting the file bytes a
    /// crash left unreferenced) and builds the server.
    public init(configuration: ParleyConfiguration) throws {
        self.configuration = configuration
        // Before the store is opened: uploads of images and PDFs would fail one by one without it.
        if let problem = configuration.media.workerProblem() { throw StartupError.noMediaWorker(problem) }
        store = try configuration.openStore()
        // With several nodes, a `streaming` row may be another node's live reply: dead nodes' replies are
        // found by their expired leases instead (`LeaseKeeper`).
        let interrupted = configuration.redis == nil ? try store.markInterruptedAtStartup() : 0
        if interrupted > 0 {
            Log.info("\(interrupted) reply(s) cut by the last shutdown are marked interrupted")
        }
        let orphans = try store.collectOrphanFiles()
        if orphans > 0 {
            Log.info("\(orphans) stored file(s) no longer referenced were removed")
        }
        let providerConfiguration = try ProviderConfiguration(environment: configuration.settings)
        let providers = ProviderRegistry(configuration: providerConfiguration, client: UpstreamClient(),
                                         vision: configuration.visionModels)
        let renderer = MarkdownRenderer()
        try Self.renderUnrenderedMessages(store: store, renderer: renderer)
        var source: MCPToolSource?
        if let mcp = configuration.mcp {
            let servers = MCPServers(configuration: mcp, client: UpstreamClient(), environment: configuration.mcpEnvironment,
                                     log: { Log.info("mcp: \($0)") })
            mcpServers = servers
            source = MCPToolSource(servers: servers, configuration: mcp)
        } else {
            mcpServers = nil
        }
        let tools = ToolCatalog(store: store, source: source, log: { Log.info($0) })
        let shared = configuration.redis.map { SharedState(url: $0, prefix: configuration.redisPrefix) }
        self.shared = shared
        replyRelay = shared.map {
            RedisReplyRelay(shared: $0, retain: configuration.generation.retainFinished, lease: configuration.failover.lease)
        }
        generations = Generations(store: store, providers: providers, limits: configuration.generation,
                                  renderer: renderer, tools: tools, files: StoredAttachments(store: store),
                                  relay: replyRelay)
        leases = replyRelay.map { [store, generations] in
            LeaseKeeper(relay: $0, store: store, generations: generations, lease: configuration.failover.lease,
                        continuing: configuration.failover.continuing)
        }
        let fileSettings = FileSettings(maxFileBytes: configuration.maxFileBytes,
                                        maxUserFileBytes: configuration.maxUserFileBytes,
                                        maxAttachments: configuration.maxAttachments)
        media = MediaProcessor(settings: configuration.media)
        let ingest = FileIngest(store: store, media: media, settings: fileSettings)
        let files = FileHandlers(store: store, ingest: ingest)
        let accounts = configuration.accounts
        let passwords = PasswordWork(memoryKiB: accounts.passwordMemoryKiB)
        if accounts.mode == .team {
            try Self.prepareTeamMode(store: store, accounts: accounts, passwords: passwords)
            try passwords.prepare(accounts: store.users())
            let now = accounts.now()
            try store.deleteExpiredSessions(idleCutoff: now.addingTimeInterval(-accounts.sessionIdle),
                                            lifetimeCutoff: now.addingTimeInterval(-accounts.sessionLifetime))
        } else if !ParleyConfiguration.isLoopback(configuration.host) {
            Log.info("warning: listening on \(configuration.host) without accounts (PARLEY_AUTH=off): "
                     + "anyone who reaches the port can read and change every conversation")
        }
        if accounts.mode == .local, let header = accounts.proxyHeader {
            Log.info("warning: PARLEY_AUTH_HEADER=\(header) is ignored in local mode (PARLEY_AUTH=on enables accounts)")
        }
        var router = Router()
        let relay = shared.map { RedisUserEvents(shared: $0, capacity: configuration.userEventLogSize) }
        userEvents = UserEventHub(logCapacity: configuration.userEventLogSize, relay: relay)
        userEventFollower = relay.map { [userEvents] in UserEventFollower(events: $0, hub: userEvents) }
        let feed = UserEventFeed(hub: userEvents, generations: generations)
        let liveStore = store
        streams = OpenStreams(limits: configuration.streams) { caller in
            switch caller.credential {
            case .session(let id): try liveStore.credentialExists(id: id, session: true)
            case .apiToken(let id): try liveStore.credentialExists(id: id, session: false)
            case .local, .proxy: true
            }
        }
        let rules = FieldRules(limits: configuration.input, providers: providers)
        let limiter: any SignInAttempts = shared.map {
            RedisSignInAttempts(limit: accounts.loginAttempts, window: .seconds(accounts.loginWindow), shared: $0)
        } ?? AttemptLimiter(limit: accounts.loginAttempts, window: accounts.loginWindow)
        let authenticator = Authenticator(store: store, settings: accounts,
                                          trustedProxies: configuration.http.trustedProxies)
        let access = ModelAccess(memberModels: configuration.usage.memberModels,
                                 listedOnly: configuration.usage.listedModelsOnly(in: accounts.mode),
                                 providers: providers)
        let rate = shared.map { RedisMessageRate(perMinute: configuration.usage.messagesPerMinute(in: accounts.mode), shared: $0) }
        let quotas = Quotas(store: store, policy: configuration.usage, mode: accounts.mode, rate: rate)
        let titler = ConversationTitler(store: store, generations: generations, providers: providers, feed: feed,
                                        maxCharacters: min(60, configuration.input.maxTitleCharacters),
                                        source: configuration.titles)
        titles = titler.jobs
        let messages = MessageHandlers(store: store, generations: generations, providers: providers,
                                       rules: rules, access: access, quotas: quotas, feed: feed, titler: titler,
                                       streams: streams, files: fileSettings)
        APIRoutes(conversations: ConversationHandlers(store: store, generations: generations, rules: rules,
                                                      access: access, feed: feed, tools: tools, messages: messages),
                  messages: messages,
                  tools: ToolHandlers(store: store, catalog: tools),
                  files: files,
                  exports: ExportHandlers(store: store, rules: rules, access: access, renderer: renderer, feed: feed,
                                          streams: streams,
                                          maxAttachmentBytes: Int64(configuration.exportMaxAttachmentBytes), ingest: ingest),
                  maxImportBytes: configuration.maxImportBytes ?? configuration.exportMaxAttachmentBytes / 2 * 3,
                  maxOpenAIBodyBytes: configuration.openAIBodyLimit,
                  events: UserEventHandlers(store: store, generations: generations, hub: feed.hub,
                                            snapshotFrames: messages.snapshotFrames,
                                            subscriptions: messages.subscriptions, streams: streams),
                  auth: AuthHandlers(store: store, authenticator: authenticator, passwords: passwords,
                                     limiter: limiter, streams: streams),
                  account: AccountHandlers(store: store, authenticator: authenticator, passwords: passwords,
                                           limiter: limiter, streams: streams),
                  admin: AdminHandlers(store: store, generations: generations, passwords: passwords,
                                       settings: accounts, streams: streams),
                  usage: UsageHandlers(store: store, maxDays: configuration.input.maxUsageDays),
                  preferences: PreferencesHandlers(store: store, rules: rules, access: access, feed: feed),
                  openAI: OpenAIHandlers(store: store, generations: generations, rules: rules, access: access,
                                         quotas: quotas, renderer: renderer,
                                         keepAlive: configuration.openAIKeepAlive, feed: feed, streams: streams,
                                         providers: providers, ingest: ingest),
                  authenticator: authenticator, unavailable: { [store, shared] in
                      (store.isReachable() ? [] : ["store"]) + (shared.map { $0.isReachable() ? [] : ["redis"] } ?? [])
                  })
            .register(in: &router)
        routes = router.registered
        server = HTTPServer(configuration: configuration.http, router: router)
    }

    /// Team mode needs an admin: the one named by PARLEY_ADMIN_USER on an empty user table, or one made
    /// with `parley user add --admin`; without either it refuses to start. The first admin receives
    /// the conversations made in local mode.
    private static func prepareTeamMode(store: Store, accounts: AccountSettings, passwords: PasswordWork) throws {
        var users = try store.users()
        if users.isEmpty, let (username, password) = accounts.bootstrapAdmin {
            let hash = try passwords.hasher.hash(password)
            users = [try store.createUser(username: username, displayName: username, role: .admin, passwordHash: hash)]
            Audit.record("user_created", ["username": username, "role": "admin", "by": "PARLEY_ADMIN_USER"])
        }
        guard let admin = users.first(where: { $0.role == .admin && !$0.disabled }) else {
            throw StartupError.noAdmin
        }
        let moved = try store.assignLocalConversations(to: admin.id)
        if moved > 0 {
            Log.info("team mode: \(moved) conversation(s) from local mode now belong to \(admin.username)")
        }
    }

    /// Gives HTML to finished messages stored without it (the replies just marked interrupted, and
    /// any an older version left without), so the page never shows them as raw Markdown. In batches,
    /// so a large backlog never sits in memory at once.
    private static func renderUnrenderedMessages(store: Store, renderer: MarkdownRenderer) throws {
        var rendered = 0
        while true {
            let batch = try store.finishedMessagesWithoutHTML()
            guard !batch.isEmpty else { break }
            let html = Dictionary(batch.map { ($0.id, renderer.render($0.content)) }) { first, _ in first }
            guard try store.saveHTML(html) > 0 else { break }  // nothing changed: never loop forever
            rendered += batch.count
        }
        if rendered > 0 {
            Log.info("rendered \(rendered) finished message(s) stored without HTML")
        }
    }

    /// Binds and starts serving; `port` is the real port afterwards.
    public func start() throws {
        try server.start()
        userEventFollower?.start()
        let generations = generations
        replyRelay?.start(onStop: { messageID in
            // Another node was asked to stop a reply this one runs.
            Task { await generations.stopAsked(messageID: messageID) }
        }, onLost: { messageID in
            // Redis restarted under a reply this node runs: its state goes out again.
            Task { await generations.republish(messageID: messageID) }
        })
        leases?.start()
        // Servers down now are retried in the background; their tools are listed as unavailable meanwhile.
        if let mcpServers { Task { await mcpServers.start() } }
    }

    public var port: Int { server.port }

    /// What nodes share, for the start-up log: `one node` or `redis HOST:PORT/DB (…)`; never a password.
    public var sharingDescription: String {
        guard let shared else { return "one node (limits and notifications in this process)" }
        let node = replyRelay.map { " as node \($0.nodeID)" } ?? ""
        return "redis \(shared.pool.url)\(node) (shared limits, notifications and reply streams across nodes)"
    }

    /// Ends live replies as `interrupted` (their text stored), finishes open streams, stops, and
    /// kills the media workers waiting as spares.
    public func shutdown() async {
        if let replyRelay, configuration.failover.continuing {
            // One node of several stops: its live replies go on elsewhere. Nothing more is published once
            // they are abandoned; what was queued is sent before the leases go, so the node that takes a
            // reply over reads every event its tabs were sent.
            leases?.stop()
            let handed = await generations.handOver()
            replyRelay.stop()
            replyRelay.releaseLeases(handed)
            if !handed.isEmpty { Log.info("\(handed.count) live reply(s) handed over to the other nodes") }
        } else {
            await generations.shutdown()
        }
        await server.stop()
        userEventFollower?.stop()
        replyRelay?.stop()
        leases?.stop()
        await mcpServers?.shutdown()
        media.shutdown()
    }
}
