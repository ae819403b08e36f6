import ParleyPrimitives
import ParleyStore

/// A provider of tools beside the built-in ones: the MCP servers of `PARLEY_MCP_CONFIG`. Why a
/// protocol: the catalog, the names, the policies and the routes do not depend on how a tool is
/// reached, and tests can serve a tool without a server process.
public protocol ToolSource: Sendable {
    /// Every tool of every server, the unavailable ones included (`available: false`).
    func listings() async -> [ToolListing]
    /// Calls `tool` of `server`. Never throws: a failure is a result with `isError`. Cancelling the
    /// calling task cancels the call at the server.
    func call(server: String, tool: String, arguments: JSON) async -> ToolCallResult
}
