import ParleyPrimitives

/// One tool as Parley lists it (`GET /api/tools`): where it comes from, what it takes, when it asks,
/// and whether its server answers now. An unavailable server's tools stay listed, so conversations
/// that enable them keep working once it is back.
public struct ToolListing: Sendable, Equatable {
    /// `<server>/<tool>`.
    public var id: String
    public var server: String
    public var name: String
    public var title: String?
    public var description: String?
    public var inputSchema: JSON
    public var approval: ToolApproval
    public var readOnly: Bool?
    public var destructive: Bool?
    public var available: Bool
    /// False: admins only, in team mode (a server's `members: false`).
    public var membersAllowed: Bool

    public init(server: String, name: String, title: String? = nil, description: String? = nil,
                inputSchema: JSON, approval: ToolApproval, readOnly: Bool? = nil, destructive: Bool? = nil,
                available: Bool = true, membersAllowed: Bool = true) {
        self.id = "\(server)/\(name)"
        self.server = server
        self.name = name
        self.title = title
        self.description = description
        self.inputSchema = inputSchema
        self.approval = approval
        self.readOnly = readOnly
        self.destructive = destructive
        self.available = available
        self.membersAllowed = membersAllowed
    }

    /// Whether a call asks for approval before the user's "always allow".
    public var asks: Bool { approval.asks(readOnly: readOnly, destructive: destructive) }
}
