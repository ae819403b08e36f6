import Foundation

/// "Always allow this tool" for one user: a call of `tool` that would ask for approval runs at once.
public struct ToolPolicy: Sendable, Equatable {
    /// The tool's id, `<server>/<tool>`.
    public let tool: String
    public let createdAt: Date

    public init(tool: String, createdAt: Date) {
        self.tool = tool
        self.createdAt = createdAt
    }
}
