import ParleyAPI
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
