/// When a tool's call waits for the user (a server's `approval` in `PARLEY_MCP_CONFIG`).
public enum ToolApproval: String, Sendable, Equatable {
    /// Every call asks.
    case always
    /// No call asks.
    case never
    /// Asks unless the tool says it only reads (`readOnlyHint: true`); always asks when it says it
    /// destroys (`destructiveHint: true`). The default.
    case auto

    /// Whether a call of a tool with these annotations asks, before any "always allow".
    func asks(readOnly: Bool?, destructive: Bool?) -> Bool {
        switch self {
        case .always: true
        case .never: false
        case .auto: destructive == true || readOnly != true
        }
    }
}
