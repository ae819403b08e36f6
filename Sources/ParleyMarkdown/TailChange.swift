/// What one `StableMarkdown.append` did to the raw tail, so a stream sends only what changed: a
/// long open block (a code fence, a list) grows by appends instead of being re-sent whole each frame.
public enum TailChange: Sendable, Hashable, Codable {
    /// Nothing was appended (an empty piece, or a finished reply).
    case unchanged
    /// Blocks were committed, so the tail's start moved: the whole new tail replaces the old one.
    case replaced(String)
    /// The tail kept its start and grew by exactly this text.
    case appended(String)
}
