import ParleyMCP
import ParleyPrimitives
import ParleyStore

/// The MCP servers of `PARLEY_MCP_CONFIG` as a `ToolSource`: each server's last known tools with its
/// approval policy and audience, and calls through `MCPServers` (cancellation reaches the server).
public struct MCPToolSource: ToolSource {
    let servers: MCPServers
    let configuration: MCPConfiguration

    public init(servers: MCPServers, configuration: MCPConfiguration) {
        self.servers = servers
        self.configuration = configuration
    }

    public func listings() async -> [ToolListing] {
        let settings = Dictionary(configuration.servers.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        return servers.tools().flatMap { entry in
            let server = settings[entry.server]
            let approval = ToolApproval(rawValue: server?.approval.rawValue ?? "auto") ?? .auto
            return entry.tools.map { tool in
                ToolListing(server: entry.server, name: tool.name, title: tool.title, description: tool.description,
                            inputSchema: tool.inputSchema, approval: approval, readOnly: tool.readOnlyHint,
                            destructive: tool.destructiveHint, available: entry.available,
                            membersAllowed: server?.membersAllowed ?? true)
            }
        }
    }

    public func call(server: String, tool: String, arguments: JSON) async -> ToolCallResult {
        do {
            let result = try await servers.call(server: server, tool: tool, arguments: arguments)
            return ToolCallResult(content: result.content, structuredContent: result.structuredContent,
                                  isError: result.isError)
        } catch {
            return .text("The tool call failed: \(error.message)", isError: true)
        }
    }
}
