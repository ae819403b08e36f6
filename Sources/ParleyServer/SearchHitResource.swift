import ParleyStore

/// One search hit in the API: the conversation's fields (as in the list) plus `message_id` (the
/// best-matching message, null when the title matched) and `snippet` (HTML: see `SnippetHTML`).
struct SearchHitResource: Encodable {
    let conversation: ConversationResource
    let messageID: String?
    let snippet: String

    init(_ hit: SearchHit, usage: TokenUsage) {
        conversation = ConversationResource(hit.conversation, usage: usage)
        messageID = hit.messageID
        snippet = SnippetHTML.render(hit.snippet)
    }

    enum CodingKeys: String, CodingKey {
        case snippet
        case messageID = "message_id"
    }

    func encode(to encoder: Encoder) throws {
        try conversation.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(messageID, forKey: .messageID)
        try container.encode(snippet, forKey: .snippet)
    }
}

/// A search answer: one page of hits in `order` (`relevance` or `newest`). `next_cursor` is always
/// null (a search answers only its first `limit` conversations); it is there so a list client reads
/// both alike.
struct SearchPageResource: Encodable {
    let items: [SearchHitResource]
    let order: SearchResults.Order

    enum CodingKeys: String, CodingKey {
        case items, order
        case nextCursor = "next_cursor"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(items, forKey: .items)
        try container.encode(order.rawValue, forKey: .order)
        try container.encodeNil(forKey: .nextCursor)
    }
}
