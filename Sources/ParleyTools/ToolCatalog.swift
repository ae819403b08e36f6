import ParleyA2UI
import ParleyGeneration
import ParleyPrimitives
import ParleyProviders
import ParleyStore

/// Module ParleyTools: the tools replies may call (the MCP servers of `PARLEY_MCP_CONFIG` through a
/// `ToolSource`, and the built-in `parley/search_history` and `parley/render_ui`), who may use which, when a call asks, the
/// function names providers see, and the routes (`/api/tools`, approvals, policies, result content).
/// It must never know a provider's wire format, SSE framing, or how a reply streams.
///
/// Every tool and the rules over them: implements the generations' `ToolRunner`.
///
/// Concurrency: immutable; the listings are read from the source on each call (the source keeps the
/// servers' latest lists), policies from the store.
public struct ToolCatalog: ToolRunner {
    let store: Store
    let source: (any ToolSource)?
    let log: @Sendable (String) -> Void
    private let history: HistorySearchTool

    public init(store: Store, source: (any ToolSource)?, log: @escaping @Sendable (String) -> Void) {
        self.store = store
        self.source = source
        self.log = log
        self.history = HistorySearchTool(store: store)
    }

    // MARK: - Listing

    /// Every tool the user may see: the built-in ones, then each server's (a member sees only servers
    /// open to members), sorted by id.
    public func listings(isAdmin: Bool) async -> [ToolListing] {
        var all = [HistorySearchTool.listing, Self.renderListing]
        all += (await source?.listings() ?? []).filter { isAdmin || $0.membersAllowed }
        return all.sorted { $0.id < $1.id }
    }

    /// The entries of a conversation's `tools` field (tool ids, `<server>/*`) that name nothing this user
    /// may use; empty when all are fine. A member learns nothing of admin-only servers: their tools read
    /// as unknown.
    public func unknownTools(_ entries: [String], isAdmin: Bool) async -> [String] {
        let listings = await listings(isAdmin: isAdmin)
        let ids = Set(listings.map(\.id))
        let servers = Set(listings.map(\.server))
        return entries.filter { entry in
            if entry.hasSuffix("/*") { return !servers.contains(String(entry.dropLast(2))) }
            return !ids.contains(entry)
        }
    }

    /// `parley/render_ui` (issue 22): draws A2UI surfaces; only draws, so it never asks.
    static let renderListing = ToolListing(
        server: RenderUITool.server, name: RenderUITool.name, title: RenderUITool.title,
        description: RenderUITool.description, inputSchema: RenderUITool.inputSchema,
        approval: .never, readOnly: true, destructive: false)

    // MARK: - ToolRunner

    public func toolbox(enabled: [String], owner: String) async -> Toolbox {
        let isAdmin = (try? store.user(id: owner)).flatMap { $0 }.map { $0.role == .admin } ?? true
        let remembered = Set(((try? store.toolPolicies(for: owner)) ?? []).map(\.tool))
        let offered = await listings(isAdmin: isAdmin).filter { listing in
            listing.available && enabled.contains { $0 == listing.id || $0 == "\(listing.server)/*" }
        }
        let names = ToolNames(toolIDs: offered.map(\.id))
        for id in names.renamed {
            log("tools: '\(id)' is offered to models as '\(names.names[id] ?? id)' (its plain name was too long or taken)")
        }
        return Toolbox(tools: offered.map { listing in
            Toolbox.Tool(id: listing.id,
                         spec: ToolSpec(name: names.names[listing.id] ?? ToolNames.plainName(listing.id),
                                        description: listing.description ?? listing.title ?? listing.id,
                                        parameters: listing.inputSchema),
                         needsApproval: listing.asks && !remembered.contains(listing.id))
        })
    }

    public func run(tool: String, arguments: JSON, owner: String) async -> ToolCallResult {
        if tool == HistorySearchTool.id { return history.run(arguments: arguments, owner: owner) }
        if tool == RenderUITool.id {
            // Its calls are settled by the generation as their arguments stream; nothing runs them.
            return .text("render_ui draws while its arguments stream; there is nothing to run.", isError: true)
        }
        guard let slash = tool.firstIndex(of: "/"), let source else {
            return .text("There is no tool '\(tool)'.", isError: true)
        }
        return await source.call(server: String(tool[..<slash]), tool: String(tool[tool.index(after: slash)...]),
                                 arguments: arguments)
    }
}
