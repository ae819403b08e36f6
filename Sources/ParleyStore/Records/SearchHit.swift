/// One conversation found by `Store.search`: the conversation and its best-ranked match (`SearchRanking`).
public struct SearchHit: Sendable, Equatable {
    public let conversation: Conversation
    /// The message that matched best, or nil when the title did.
    public let messageID: String?
    /// A stretch of the matched text around the match, each match between `matchStart` and
    /// `matchEnd` (private-use characters, removed from the indexed text, so they mark nothing else).
    /// Plain text: escape it before putting it in HTML.
    public let snippet: String

    public static let matchStart: Unicode.Scalar = "\u{E000}"
    public static let matchEnd: Unicode.Scalar = "\u{E001}"

    public init(conversation: Conversation, messageID: String?, snippet: String) {
        self.conversation = conversation
        self.messageID = messageID
        self.snippet = snippet
    }
}
