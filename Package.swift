// swift-tools-version:6.0
// Parley: a self-hosted chat server. The target list reads as the data flow:
// upstream bytes -> SSE decoder -> providers -> generations -> Markdown -> HTTP/SSE out.
import PackageDescription

let package = Package(
    name: "Parley",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "parley", targets: ["parley"]),
        .executable(name: "parley-media-worker", targets: ["parley-media-worker"]),
    ],
    targets: [
        // MARK: - System C libraries (Debian packages), each touched by exactly one Swift module.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCmarkGFM", path: "Sources/CCmarkGFM", pkgConfig: "libcmark-gfm",
                       providers: [.apt(["libcmark-gfm-dev", "libcmark-gfm-extensions-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium",
                       providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CNettle", path: "Sources/CNettle", pkgConfig: "nettle",
                       providers: [.apt(["nettle-dev"])]),
        .systemLibrary(name: "CYajl", path: "Sources/CYajl", pkgConfig: "yajl", providers: [.apt(["libyajl-dev"])]),
        // simdjson is C++: CSimdjson is a small C face on its DOM parser (compiled here, linking Debian's
        // libsimdjson), so ParleyProviders reads frames with it without C++ interop.
        .target(name: "CSimdjson", path: "Sources/CSimdjson", linkerSettings: [.linkedLibrary("simdjson")]),
        // jansson only for `make bench` (parley-chunk-bench), measured against simdjson and JSONDecoder.
        .systemLibrary(name: "CJansson", path: "Sources/CJansson", pkgConfig: "jansson",
                       providers: [.apt(["libjansson-dev"])]),
        .systemLibrary(name: "CVips", path: "Sources/CVips", pkgConfig: "vips",
                       providers: [.apt(["libvips-dev"])]),
        .systemLibrary(name: "CPoppler", path: "Sources/CPoppler", pkgConfig: "poppler-glib",
                       providers: [.apt(["libpoppler-glib-dev"])]),
        // PostgreSQL's client library, for the store behind PARLEY_DATABASE_URL (issue 24).
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),
        // hiredis 0.14 (Debian 12), the pre-1.0 API: only ParleyRedis touches it.
        .systemLibrary(name: "CHiredis", path: "Sources/CHiredis", pkgConfig: "hiredis",
                       providers: [.apt(["libhiredis-dev"])]),

        // MARK: - The data flow, one module per stage.
        // Encodings of standard values that stages which must not know each other share (base64url for
        // the store's ids and ParleyAuth's secrets, a Duration in whole milliseconds for C APIs): pure
        // Swift, knows no Parley type and no C library, depends on nothing.
        .target(name: "ParleyPrimitives"),
        // How a reply ends (finish reason, error code): spoken by providers, the store and the server alike.
        .target(name: "ParleyOutcome"),
        .target(name: "ParleyUpstream", dependencies: ["CCurl", "ParleyPrimitives"]),
        .target(name: "ParleySSE"),
        .target(name: "ParleyProviders",
                dependencies: ["ParleyUpstream", "ParleySSE", "ParleyOutcome", "ParleyPrimitives", "CSimdjson"]),
        .target(name: "ParleyStore", dependencies: ["CSQLite", "CLibPQ", "ParleyPrimitives", "ParleyOutcome"]),
        .target(name: "ParleyMarkdown", dependencies: ["CCmarkGFM"]),
        // The Model Context Protocol client: configured servers (Streamable HTTP and stdio), their tools
        // and calls. Knows nothing of providers, the store, replies or HTTP serving.
        .target(name: "ParleyMCP", dependencies: ["ParleyUpstream", "ParleySSE", "ParleyPrimitives"]),
        // A2UI v0.9 (issue 22): the messages a model draws surfaces with, the basic catalog as data, the
        // fold of a branch's surfaces that judges each message, and the extractor that reads them out of
        // streaming tool arguments (yajl). Pure: knows no HTTP, store or provider.
        .target(name: "ParleyA2UI", dependencies: ["ParleyPrimitives", "CYajl"]),
        .target(name: "ParleyGeneration",
                dependencies: ["ParleyProviders", "ParleyStore", "ParleyMarkdown", "ParleyOutcome", "ParleyPrimitives",
                               "ParleyA2UI"]),
        .target(name: "ParleyHTTP", dependencies: ["CMicroHTTPD", "ParleyPrimitives"]),
        // Team mode's credentials: Argon2id passwords and random tokens (libsodium only here), and
        // SHA-256 (nettle: it uses the CPU's SHA instructions).
        .target(name: "ParleyAuth", dependencies: ["CSodium", "CNettle", "ParleyPrimitives"]),
        // What an uploaded file IS and what Parley makes of it, the parent's half: kind by its bytes, and
        // every decode sent to a `parley-media-worker` child with rlimits (pool, queue, spares, timeout).
        // Links no decoder, so the server maps neither libvips nor poppler. Knows nothing of HTTP, the
        // store or providers.
        .target(name: "ParleyMedia", dependencies: ["ParleyPrimitives"]),
        // The child's half: images re-encoded (libvips), PDF text (poppler), under the child's own rlimits.
        // Only the `parley-media-worker` executable (and the media bench) link it.
        .target(name: "ParleyMediaWorker", dependencies: ["CVips", "CPoppler", "ParleyMedia"]),
        // Issue 24's Redis client (PARLEY_REDIS_URL): URL, synchronous connections on hiredis, a pool, and
        // typed stream, counter and pub/sub commands. Knows no Parley type beyond event ids as numbers.
        .target(name: "ParleyRedis", dependencies: ["CHiredis", "ParleyPrimitives"]),
        // MARK: - The API, one module per feature; each depends only on the layers below it.
        // The API's shared vocabulary: who is calling, errors as answers, JSON bodies, field rules,
        // resources (records as JSON), open-stream caps, the log.
        .target(name: "ParleyAPI",
                dependencies: ["ParleyHTTP", "ParleyStore", "ParleyProviders", "ParleyGeneration", "ParleyPrimitives"]),
        // What browsers receive as event streams: reply frames (SSE encoding, snapshots) and each user's
        // notifications (GET /api/events).
        .target(name: "ParleyEvents",
                dependencies: ["ParleyAPI", "ParleyHTTP", "ParleyStore", "ParleyGeneration", "ParleyOutcome",
                               "ParleyPrimitives"]),
        // Team mode: sign-in, sessions, API tokens, admin, attempt limits, audit.
        .target(name: "ParleyAccounts",
                dependencies: ["ParleyAPI", "ParleyAuth", "ParleyHTTP", "ParleyStore", "ParleyGeneration"]),
        // Rate limits, daily budgets, model access, usage reports.
        .target(name: "ParleyQuotas",
                dependencies: ["ParleyAPI", "ParleyAccounts", "ParleyHTTP", "ParleyStore", "ParleyProviders"]),
        // Tools: the catalog (MCP servers, built-in tools), approval policies, provider-facing names,
        // /api/tools and /api/tool_policies.
        .target(name: "ParleyTools",
                dependencies: ["ParleyAPI", "ParleyHTTP", "ParleyStore", "ParleyGeneration", "ParleyProviders",
                               "ParleyPrimitives", "ParleyMCP", "ParleyA2UI"]),
        // Attachments: uploads through ParleyMedia into the store's FileStore (text documents checked
        // here: UTF-8, and JSON with yajl), downloads, the files a reply's context carries (StoredAttachments).
        .target(name: "ParleyFiles",
                dependencies: ["ParleyAPI", "ParleyHTTP", "ParleyStore", "ParleyMedia", "ParleyAuth",
                               "ParleyGeneration", "ParleyProviders", "CYajl"]),
        // Conversations, replies (send, stream, stop, regenerate, continue, tool decisions), search, titles, preferences.
        .target(name: "ParleyConversations",
                dependencies: ["ParleyAPI", "ParleyEvents", "ParleyQuotas", "ParleyHTTP", "ParleyStore",
                               "ParleyProviders", "ParleyGeneration", "ParleyTools", "ParleyPrimitives", "ParleyFiles",
                               "ParleyA2UI"]),
        // Export and import (JSON and Markdown).
        .target(name: "ParleyTransfer",
                dependencies: ["ParleyAPI", "ParleyEvents", "ParleyQuotas", "ParleyHTTP", "ParleyStore",
                               "ParleyMarkdown", "ParleyOutcome", "ParleyPrimitives", "CYajl", "ParleyFiles", "ParleyMedia",
                               "ParleyA2UI"]),
        // The OpenAI-compatible endpoint (/v1); images and files it is sent are stored through ParleyFiles.
        .target(name: "ParleyOpenAICompat",
                dependencies: ["ParleyAPI", "ParleyEvents", "ParleyQuotas", "ParleyHTTP", "ParleyStore",
                               "ParleyGeneration", "ParleyMarkdown", "ParleyOutcome", "ParleyProviders",
                               "ParleyPrimitives", "ParleyFiles"]),
        // The running server: configuration, the routes in one place, every part wired together.
        // openapi.json links to docs/openapi.json, whose bytes are compiled in (GET /api/openapi.json).
        // What several nodes share through Redis (PARLEY_REDIS_URL): the limits counted for the whole
        // cluster and each user's notifications, behind the feature modules' own protocols.
        .target(name: "ParleyCluster",
                dependencies: ["ParleyRedis", "ParleyAPI", "ParleyQuotas", "ParleyAccounts", "ParleyEvents",
                               "ParleyGeneration", "ParleyStore", "ParleyOutcome", "ParleyPrimitives"]),
        .target(name: "ParleyServer",
                dependencies: ["ParleyCluster", "ParleyRedis", "ParleyAPI", "ParleyEvents", "ParleyAccounts", "ParleyQuotas", "ParleyConversations",
                               "ParleyTransfer", "ParleyOpenAICompat", "ParleyTools", "ParleyHTTP", "ParleyStore",
                               "ParleyProviders", "ParleyGeneration", "ParleyMarkdown", "ParleyUpstream",
                               "ParleyPrimitives", "ParleyMCP", "ParleyMedia", "ParleyFiles", "ParleyA2UI"],
                resources: [.embedInCode("openapi.json")]),
        // The command line: serve, backup, user, health.
        .target(name: "ParleyCLI",
                dependencies: ["ParleyServer", "ParleyAccounts", "ParleyAuth", "ParleyStore",
                               "ParleyHTTP", "ParleyUpstream"]),
        .executableTarget(name: "parley", dependencies: ["ParleyCLI", "ParleyServer"]),
        // The child that decodes one uploaded file; `parley` runs it from its own directory (PARLEY_MEDIA_WORKER).
        .executableTarget(name: "parley-media-worker", dependencies: ["ParleyMediaWorker"]),
        // `make bench`: the cost of streaming Markdown against one full render.
        .executableTarget(name: "parley-markdown-bench", dependencies: ["ParleyMarkdown", "ParleyTestSupport"]),
        // `make bench`: a 12-megapixel JPEG downscaled through the media worker (issue 21).
        .executableTarget(name: "parley-media-bench", dependencies: ["ParleyMedia", "CVips"]),
        // `make bench`: A2UI validation per message and per 500-component surface (issue 22).
        .executableTarget(name: "parley-a2ui-bench", dependencies: ["ParleyA2UI", "ParleyPrimitives"]),
        // `make bench`: µs per upstream chunk parsed into provider events, JSONDecoder against simdjson,
        // jansson and yajl, on the captures in Tests/ParleyProvidersTests/Fixtures (issue 23).
        .executableTarget(name: "parley-chunk-bench",
                          dependencies: ["ParleyProviders", "ParleySSE", "CJansson", "CYajl"]),

        // MARK: - Tests: real servers on loopback, a real fake upstream, real SQLite files.
        .target(name: "ParleyTestSupport", dependencies: ["CCurl", "ParleyPrimitives"], path: "Sources/ParleyTestSupport"),
        .testTarget(name: "ParleySSETests", dependencies: ["ParleySSE", "ParleyTestSupport"]),
        .testTarget(name: "ParleyUpstreamTests", dependencies: ["ParleyUpstream", "ParleyTestSupport"]),
        .testTarget(name: "ParleyHTTPTests", dependencies: ["ParleyHTTP", "ParleyTestSupport"]),
        .testTarget(name: "ParleyStoreTests", dependencies: ["ParleyStore", "ParleyPrimitives", "ParleyOutcome"]),
        .testTarget(name: "ParleyMarkdownTests", dependencies: ["ParleyMarkdown", "ParleyTestSupport"]),
        .testTarget(name: "ParleyProvidersTests",
                    dependencies: ["ParleyProviders", "ParleySSE", "ParleyUpstream", "ParleyPrimitives", "ParleyTestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "ParleyGenerationTests",
                    dependencies: ["ParleyGeneration", "ParleyProviders", "ParleyStore", "ParleyMarkdown", "ParleyPrimitives"]),
        .testTarget(name: "ParleyAuthTests", dependencies: ["ParleyAuth"]),
        // A real redis-server: PARLEY_TEST_REDIS_URL (scripts/redis-test-server.sh), and servers of their own.
        .testTarget(name: "ParleyRedisTests", dependencies: ["ParleyRedis"]),
        // Against a real Redis: the reply event codec, lease races.
        .testTarget(name: "ParleyClusterTests",
                    dependencies: ["ParleyCluster", "ParleyRedis", "ParleyGeneration", "ParleyStore", "ParleyPrimitives",
                                   "ParleyTestSupport"]),
        .testTarget(name: "ParleyA2UITests", dependencies: ["ParleyA2UI", "ParleyPrimitives"]),
        // Real libvips and poppler on files the tests make; the worker is the built `parley`.
        .testTarget(name: "ParleyMediaTests", dependencies: ["ParleyMedia", "CVips", "ParleyTestSupport"]),
        .testTarget(name: "ParleyMCPTests",
                    dependencies: ["ParleyMCP", "ParleyUpstream", "ParleyPrimitives", "ParleyTestSupport"]),
        .testTarget(name: "ParleyServerTests",
                    dependencies: ["ParleyServer", "ParleyCLI", "ParleyAPI", "ParleyEvents", "ParleyAccounts",
                                   "ParleyQuotas", "ParleyConversations", "ParleyTransfer", "ParleyOpenAICompat", "ParleyTools",
                                   "ParleyHTTP", "ParleyAuth", "ParleyGeneration", "ParleyProviders",
                                   "ParleySSE", "ParleyStore", "ParleyPrimitives", "ParleyTestSupport", "ParleyMedia",
                                   "ParleyRedis"]),
    ],
    swiftLanguageModes: [.v6]
)
