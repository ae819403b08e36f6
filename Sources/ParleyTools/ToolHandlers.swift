import ParleyAPI
import ParleyHTTP
import ParleyPrimitives
import ParleyStore

/// `GET /api/tools`, and the caller's "always allow" policies (`GET` and `DELETE /api/tool_policies`).
package struct ToolHandlers: Sendable {
    let store: Store
    let catalog: ToolCatalog

    package init(store: Store, catalog: ToolCatalog) {
        self.store = store
        self.catalog = catalog
    }

    /// Every tool the caller may enable, the unavailable ones marked.
    package func list(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let items: [JSON] = await catalog.listings(isAdmin: caller.isAdmin).map { listing in
            var fields: [String: JSON] = [
                "id": .string(listing.id), "server": .string(listing.server), "name": .string(listing.name),
                "title": listing.title.map(JSON.string) ?? .null,
                "description": listing.description.map(JSON.string) ?? .null,
                "input_schema": listing.inputSchema, "approval": .string(listing.approval.rawValue),
                "available": .bool(listing.available),
            ]
            if let readOnly = listing.readOnly { fields["read_only"] = .bool(readOnly) }
            if let destructive = listing.destructive { fields["destructive"] = .bool(destructive) }
            return .object(fields)
        }
        return Self.json(.object(["items": .array(items)]))
    }

    /// The caller's remembered tools.
    package func policies(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let items: [JSON] = try store.toolPolicies(for: caller.userID).map {
            .object(["tool": .string($0.tool), "created_at": .string(Timestamp.format($0.createdAt))])
        }
        return Self.json(.object(["items": .array(items)]))
    }

    /// Takes one "always allow" back: `?tool=<tool id>`; 404 when the caller has none for it.
    package func forget(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        guard let tool = request.query["tool"], !tool.isEmpty, tool.count <= ToolRules.maxIDLength else {
            throw HTTPError(status: 400, code: "invalid_request",
                            message: "'tool' (a query parameter) must name a tool id.")
        }
        guard try store.forgetTool(tool, for: caller.userID) else {
            throw HTTPError(status: 404, code: "not_found", message: "No policy for tool \(tool).")
        }
        return HTTPResponse(status: 204, headers: [], body: .bytes([]))
    }

    static func json(_ value: JSON) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", "application/json; charset=utf-8")],
                     body: .bytes(Array(value.text.utf8)))
    }
}
