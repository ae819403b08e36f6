/// The limits on a conversation's `tools` field.
package enum ToolRules {
    /// Entries in one conversation's `tools`.
    package static let maxEntries = 128
    /// Characters of one tool id or `<server>/*`.
    package static let maxIDLength = 200
}
