import ParleyAPI

/// `POST /api/conversations` with a `message`: the new conversation and its first turn, the user
/// message and the reply (`streaming`), as a send answers them.
struct ConversationStartResource: Encodable {
    let conversation: ConversationResource
    let turn: TurnResource

    enum CodingKeys: String, CodingKey {
        case conversation
        case userMessage = "user_message"
        case assistantMessage = "assistant_message"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(conversation, forKey: .conversation)
        try container.encode(turn.userMessage, forKey: .userMessage)
        try container.encode(turn.assistantMessage, forKey: .assistantMessage)
    }
}
