import ParleyPrimitives
import ParleyStore

/// The built-in tool `parley/search_history`: searches the caller's own conversations through the
/// FTS5 index (the same search as `GET /api/search`, scoped to the owner). Read-only and per user; its
/// approval is `never`. No MCP server is needed.
struct HistorySearchTool: Sendable {
    static let server = "parley"
    static let name = "search_history"
    static let id = "\(server)/\(name)"
    /// Conversations a call may return (its `limit` is clamped to this).
    static let maxResults = 20

    let store: Store

    static let listing = ToolListing(
        server: server, name: name, title: "Search history",
        description: "Searches the user's own earlier conversations (titles and messages) and returns the "
            + "best matches with a snippet of the matching text.",
        inputSchema: .object([
            "type": .string("object"),
            "properties": .object([
                "query": .object(["type": .string("string"), "description": .string("Words to look for.")]),
                "limit": .object(["type": .string("integer"), "minimum": .integer(1),
                                  "maximum": .integer(Int64(maxResults)),
                                  "description": .string("How many conversations to return (default 5).")]),
            ]),
            "required": .array([.string("query")]),
        ]),
        approval: .never, readOnly: true, destructive: false)

    func run(arguments: JSON, owner: String) -> ToolCallResult {
        guard let query = arguments["query"]?.stringValue,
              !query.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            return .text("'query' must be a non-empty string.", isError: true)
        }
        var limit = 5
        if case .integer(let asked)? = arguments["limit"] { limit = Int(clamping: min(max(asked, 1), Int64(Self.maxResults))) }
        let results: SearchResults
        do {
            results = try store.search(query, ownedBy: owner, limit: limit)
        } catch {
            return .text("The search failed: \(error)", isError: true)
        }
        let hits: [JSON] = results.hits.map { hit in
            let snippet = String(String.UnicodeScalarView(hit.snippet.unicodeScalars.filter {
                $0 != SearchHit.matchStart && $0 != SearchHit.matchEnd
            }))
            var fields: [String: JSON] = ["conversation_id": .string(hit.conversation.id),
                                         "title": .string(hit.conversation.title), "snippet": .string(snippet)]
            if let messageID = hit.messageID { fields["message_id"] = .string(messageID) }
            return .object(fields)
        }
        let structured = JSON.object(["results": .array(hits)])
        let text = hits.isEmpty ? "No conversation matches '\(query)'." : structured.text
        return ToolCallResult(content: [.object(["type": .string("text"), "text": .string(text)])],
                              structuredContent: structured, isError: false)
    }
}
