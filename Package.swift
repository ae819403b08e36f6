// swift-tools-version:6.0
// Parley: a self-hosted chat server. The target list reads as the data flow:
// upstream bytes -> SSE decoder -> providers -> generations -> Markdown -> HTTP/SSE out.
import PackageDescription

let package = Package(
    name: "Parley",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "parley", targets: ["parley"]),
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

        // MARK: - The data flow, one module per stage.
        // How a reply ends (finish reason, error code): spoken by providers, the store and the server alike.
        .target(name: "ParleyOutcome"),
        .target(name: "ParleyUpstream", dependencies: ["CCurl"]),
        .target(name: "ParleySSE"),
        .target(name: "ParleyProviders", dependencies: ["ParleyUpstream", "ParleySSE", "ParleyOutcome"]),
        .target(name: "ParleyStore", dependencies: ["CSQLite", "ParleyOutcome"]),
        .target(name: "ParleyMarkdown", dependencies: ["CCmarkGFM"]),
        .target(name: "ParleyGeneration",
                dependencies: ["ParleyProviders", "ParleyStore", "ParleyMarkdown", "ParleyOutcome"]),
        .target(name: "ParleyHTTP", dependencies: ["CMicroHTTPD"]),
        // Team mode's credentials: Argon2id passwords and random tokens (libsodium only here).
        .target(name: "ParleyAuth", dependencies: ["CSodium"]),
        // openapi.json links to docs/openapi.json, whose bytes are compiled in (GET /api/openapi.json).
        .target(name: "ParleyServer",
                dependencies: ["ParleyHTTP", "ParleyStore", "ParleyProviders",
                               "ParleyGeneration", "ParleyMarkdown", "ParleyUpstream", "ParleyAuth", "ParleyOutcome"],
                resources: [.embedInCode("openapi.json")]),
        .executableTarget(name: "parley", dependencies: ["ParleyServer"]),
        // `make bench`: the cost of streaming Markdown against one full render.
        .executableTarget(name: "parley-markdown-bench", dependencies: ["ParleyMarkdown", "ParleyTestSupport"]),

        // MARK: - Tests: real servers on loopback, a real fake upstream, real SQLite files.
        .target(name: "ParleyTestSupport", dependencies: ["CCurl"], path: "Sources/ParleyTestSupport"),
        .testTarget(name: "ParleySSETests", dependencies: ["ParleySSE", "ParleyTestSupport"]),
        .testTarget(name: "ParleyUpstreamTests", dependencies: ["ParleyUpstream", "ParleyTestSupport"]),
        .testTarget(name: "ParleyHTTPTests", dependencies: ["ParleyHTTP", "ParleyTestSupport"]),
        .testTarget(name: "ParleyStoreTests", dependencies: ["ParleyStore", "ParleyOutcome"]),
        .testTarget(name: "ParleyMarkdownTests", dependencies: ["ParleyMarkdown", "ParleyTestSupport"]),
        .testTarget(name: "ParleyProvidersTests",
                    dependencies: ["ParleyProviders", "ParleySSE", "ParleyUpstream", "ParleyTestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "ParleyGenerationTests",
                    dependencies: ["ParleyGeneration", "ParleyProviders", "ParleyStore"]),
        .testTarget(name: "ParleyAuthTests", dependencies: ["ParleyAuth"]),
        .testTarget(name: "ParleyServerTests",
                    dependencies: ["ParleyServer", "ParleyHTTP", "ParleyAuth", "ParleyGeneration", "ParleyProviders",
                                   "ParleySSE", "ParleyStore", "ParleyTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
