import ParleyGeneration
import ParleyHTTP
import ParleyStore

/// Conversation history: create, list (keyset pages), show the current branch, edit, delete, switch branch.
struct ConversationHandlers: Sendable {
    let store: Store
    let generations: Generations

    /// Page size bounds for `GET /api/conversations`.
    static let defaultPageSize = 50
    static let maxPageSize = 200

    func create(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = try JSONBody(request)
        let conversation = try store.createConversation(title: try body.string("title"),
                                                        model: try body.string("model"),
                                                        systemPrompt: try body.string("system_prompt"))
        return .json(ConversationResource(conversation), status: 201)
    }

    func list(_ request: HTTPRequest) async throws -> HTTPResponse {
        var limit = Self.defaultPageSize
        if let raw = request.query["limit"] {
            guard let value = Int(raw), (1...Self.maxPageSize).contains(value) else {
                throw HTTPError(status: 400, code: "invalid_request",
                                message: "'limit' must be an integer from 1 to \(Self.maxPageSize).")
            }
            limit = value
        }
        let page = try store.listConversations(limit: limit, cursor: request.query["cursor"])
        return .json(ConversationPageResource(items: page.items.map { ConversationResource($0) },
                                              nextCursor: page.nextCursor))
    }

    func show(_ request: HTTPRequest) async throws -> HTTPResponse {
        let conversation = try existing(request)
        let branch = try store.currentBranch(conversationID: conversation.id)
        let messages = branch.map { item in
            MessageResource(item.message, siblings: item.siblings)
        }
        return .json(ConversationResource(conversation, messages: messages))
    }

    func update(_ request: HTTPRequest) async throws -> HTTPResponse {
        let id = request.parameters["id"] ?? ""
        let body = try JSONBody(request)
        let title = try body.string("title")
        if body.has("title"), title?.isEmpty ?? true {
            throw HTTPError(status: 400, code: "invalid_request", message: "'title' must be a non-empty string.")
        }
        let systemPrompt: String?? = body.has("system_prompt") ? .some(try body.string("system_prompt")) : .none
        let model: String?? = body.has("model") ? .some(try body.string("model")) : .none
        guard let conversation = try store.updateConversation(id: id, title: title, systemPrompt: systemPrompt,
                                                              model: model) else {
            throw APIErrors.conversationNotFound
        }
        return .json(ConversationResource(conversation))
    }

    func delete(_ request: HTTPRequest) async throws -> HTTPResponse {
        let id = request.parameters["id"] ?? ""
        // Its live replies end first: their upstream calls stop and their slots are freed. A reply
        // started while those stops were awaited is stopped after the delete (its rows are gone).
        await generations.stopAll(conversationID: id)
        let deleted = try store.deleteConversation(id: id)
        await generations.stopAll(conversationID: id)
        guard deleted else { throw APIErrors.conversationNotFound }
        return .noContent()
    }

    func switchBranch(_ request: HTTPRequest) async throws -> HTTPResponse {
        let conversation = try existing(request)
        let messageID = try JSONBody(request).requiredString("message_id")
        do {
            _ = try store.setCurrent(conversationID: conversation.id, messageID: messageID)
        } catch {
            if case .notFound = error {
                throw HTTPError(status: 404, code: "not_found", message: "No message \(messageID) in this conversation.")
            }
            throw error
        }
        return try await show(request)
    }

    private func existing(_ request: HTTPRequest) throws -> Conversation {
        guard let conversation = try store.conversation(id: request.parameters["id"] ?? "") else {
            throw APIErrors.conversationNotFound
        }
        return conversation
    }
}

/// One page of the conversation list.
struct ConversationPageResource: Encodable {
    let items: [ConversationResource]
    let nextCursor: String?

    enum CodingKeys: String, CodingKey {
        case items
        case nextCursor = "next_cursor"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(items, forKey: .items)
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}
