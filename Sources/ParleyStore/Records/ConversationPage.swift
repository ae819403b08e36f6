/// One page of conversations, newest activity first. Pass `nextCursor` back for the next page;
/// nil means this is the last page.
public struct ConversationPage: Sendable, Equatable {
    public let items: [Conversation]
    public let nextCursor: String?

    public init(items: [Conversation], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

