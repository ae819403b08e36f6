import Foundation
import ParleyAPI
import ParleyEvents
import ParleyGeneration
import ParleyHTTP
import ParleyQuotas
import ParleyStore
import ParleyTools

/// Module ParleyConversations: conversations, replies, search, titles and preferences over HTTP.
/// It must never know how a caller was authenticated, nor the `/v1` shapes.
///
/// Conversation history: create, list (keyset pages, filters, full-text search), show the current branch, edit
/// (settings, pin, archive), delete, switch branch, fork. Every conversation answer carries its generation
/// settings and token totals.
package struct ConversationHandlers: Sendable {
    let store: Store
    let generations: Generations
    let rules: FieldRules
    let access: ModelAccess
    /// Tells the caller's other tabs of each change.
    let feed: UserEventFeed
    /// Checks a conversation's `tools`.
    let tools: ToolCatalog
    /// Starts the first message a create may carry, by the send's own path.
    let messages: MessageHandlers

    package init(store: Store, generations: Generations, rules: FieldRules, access: ModelAccess, feed: UserEventFeed,
                 tools: ToolCatalog, messages: MessageHandlers) {
        self.store = store
        self.generations = generations
        self.rules = rules
        self.access = access
        self.feed = feed
        self.tools = tools
        self.messages = messages
    }

    /// The body's `tools` (nil when absent), each a tool id or `<server>/*` the caller may use; 400
    /// `unknown_tool` names the first that is not (a member's admin-only tools read as unknown).
    private func toolsField(_ body: JSONBody, _ caller: Caller) async throws -> [String]? {
        guard let entries = try body.strings("tools", maxCount: ToolRules.maxEntries, maxLength: ToolRules.maxIDLength) else {
            return nil
        }
        if let unknown = await tools.unknownTools(entries, isAdmin: caller.isAdmin).first {
            throw HTTPError(status: 400, code: "unknown_tool",
                            message: "'tools': there is no tool '\(unknown)' you may use (see GET /api/tools).")
        }
        var seen: Set<String> = []
        return entries.filter { seen.insert($0).inserted }
    }

    /// A new conversation; with `message` (a send's `content`, `attachments`, `model`) also its first
    /// turn, started as `POST /api/conversations/{id}/messages` would start it (see `start`).
    package func create(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let body = try JSONBody(request)
        // An absent or null title is the default one; a given title follows the same rule as PATCH.
        let title = try body.string("title").map(rules.title)
        let systemPrompt = try body.string("system_prompt").map(rules.systemPrompt)
        var model: String?
        if let requested = try body.string("model") {
            model = try await rules.model(requested)
            try await access.require(requested, for: caller)
        }
        let settings = GenerationSettings(try settingsFields.change(request))
        let enabled = try await toolsField(body, caller) ?? []
        // The first message is checked and admitted before the conversation exists: a refused one
        // leaves no empty conversation behind.
        var first: TurnRequest?
        if let message = try body.object("message") {
            first = try await messages.admitTurn(message, conversationID: nil, storedModel: model, caller)
        }
        let conversation = try await store.createConversationInSharedCommit(
            title: title, model: model, systemPrompt: systemPrompt, ownedBy: caller.userID, settings: settings,
            tools: enabled)
        if let first { return try await start(first, in: conversation, caller) }
        feed.conversationCreated(conversation)
        return .json(ConversationResource(conversation), status: 201)
    }

    /// The list, newest activity first; `?q=` searches instead (best match first, one page).
    /// `?pinned=` and `?archived=` (true/false) filter both; archived conversations are left out
    /// unless `archived=true`.
    package func list(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let limit = try PageLimit.from(request)
        let pinned = try Self.flag(request, "pinned")
        let archived = try Self.flag(request, "archived") ?? false
        if let query = request.query["q"], query.contains(where: { !$0.isWhitespace }) {
            return try search(query, caller: caller, limit: limit, pinned: pinned, archived: archived,
                              hasCursor: request.query["cursor"] != nil)
        }
        let page = try store.listConversations(ownedBy: caller.userID, limit: limit, cursor: request.query["cursor"],
                                               pinned: pinned, archived: archived)
        let usage = try store.usage(conversationIDs: page.items.map(\.id))
        return .json(ConversationPageResource(items: page.items.map { ConversationResource($0, usage: usage[$0.id] ?? .init()) },
                                              nextCursor: page.nextCursor))
    }

    /// Full-text search (FTS5, trigram tokens: see docs/api.md). The query is FTS5 syntax; one that
    /// FTS5 refuses is a 400 `invalid_query`. A query under 3 characters, too short for a trigram
    /// index, is looked for as plain text (`Store.search`).
    private func search(_ query: String, caller: Caller, limit: Int, pinned: Bool?, archived: Bool,
                        hasCursor: Bool) throws -> HTTPResponse {
        guard !hasCursor else {
            throw HTTPError(status: 400, code: "invalid_request",
                            message: "A search answers one page of the best matches: it takes 'limit', not 'cursor'.")
        }
        let length = query.unicodeScalars.count
        guard length <= rules.limits.maxSearchQueryCharacters else {
            throw HTTPError(status: 400, code: "query_too_long",
                            message: "'q' is longer than \(rules.limits.maxSearchQueryCharacters) characters "
                                + "(PARLEY_MAX_SEARCH_QUERY_CHARS).")
        }
        let results: SearchResults
        do {
            results = try store.search(query, ownedBy: caller.userID, limit: limit, pinned: pinned, archived: archived,
                                    candidates: rules.limits.searchCandidates)
        } catch {
            if case .invalidQuery(let why) = error {
                throw HTTPError(status: 400, code: "invalid_query",
                                message: "'q' is not a valid search (FTS5 query syntax: docs/api.md): \(why).")
            }
            throw error
        }
        let usage = try store.usage(conversationIDs: results.hits.map(\.conversation.id))
        return .json(SearchPageResource(items: results.hits.map { SearchHitResource($0, usage: usage[$0.conversation.id] ?? .init()) },
                                        order: results.order))
    }

    package func show(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let conversation = try existing(request, caller)
        let branch = try store.currentBranch(conversationID: conversation.id)
        let files = try store.messageFiles(messageIDs: branch.filter { $0.message.role == .user }.map(\.message.id))
        let messages = branch.map { item in
            MessageResource(item.message, siblings: item.siblings, files: files[item.message.id] ?? [])
        }
        return .json(ConversationResource(conversation, messages: messages, usage: try usage(of: conversation.id)))
    }

    package func update(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let id = try request.parameter("id")
        let body = try JSONBody(request)
        // Absent: unchanged. The title cannot be cleared; the system prompt and model can (null).
        var title: String?
        if body.has("title") {
            guard let requested = try body.string("title") else {
                throw HTTPError(status: 400, code: "invalid_request",
                                message: "'title' cannot be null; leave it out to keep the title.")
            }
            title = try rules.title(requested)
        }
        var systemPrompt: String??
        if body.has("system_prompt") {
            systemPrompt = .some(try body.string("system_prompt").map(rules.systemPrompt))
        }
        var model: String??
        if body.has("model") {
            if let requested = try body.string("model") {
                model = .some(try await rules.model(requested))
                try await access.require(requested, for: caller)
            } else {
                model = .some(nil)
            }
        }
        let settings = try settingsFields.change(request)
        let enabled = try await toolsField(body, caller)
        if !settings.isEmpty {
            guard try store.updateGenerationSettings(id: id, ownedBy: caller.userID, settings) != nil else {
                throw APIErrors.conversationNotFound
            }
        }
        if let enabled, try store.setTools(enabled, conversationID: id, ownedBy: caller.userID) == nil {
            throw APIErrors.conversationNotFound
        }
        let pinned = try body.bool("pinned")
        let archived = try body.bool("archived")
        guard let conversation = try store.updateConversation(id: id, ownedBy: caller.userID, title: title,
                                                              systemPrompt: systemPrompt, model: model,
                                                              pinned: pinned, archived: archived) else {
            throw APIErrors.conversationNotFound
        }
        feed.conversationUpdated(conversation)
        return .json(ConversationResource(conversation, usage: try usage(of: id)))
    }

    package func delete(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let id = try existing(request, caller).id
        // Its live replies end first: their upstream calls stop and their slots are freed. A reply
        // started while those stops were awaited is stopped after the delete (its rows are gone).
        await generations.stopAll(conversationID: id)
        let deleted = try store.deleteConversation(id: id, ownedBy: caller.userID)
        await generations.stopAll(conversationID: id)
        guard deleted else { throw APIErrors.conversationNotFound }
        feed.conversationDeleted(id: id, owner: caller.userID)
        return .noContent()
    }

    package func switchBranch(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let conversation = try existing(request, caller)
        let messageID = try JSONBody(request).requiredString("message_id")
        do {
            var switched = conversation
            switched.currentLeafID = try store.setCurrent(conversationID: conversation.id, messageID: messageID)
            feed.conversationUpdated(switched)
        } catch {
            if case .notFound = error {
                throw HTTPError(status: 404, code: "not_found", message: "No message \(messageID) in this conversation.")
            }
            throw error
        }
        return try await show(request, caller)
    }

    /// A new conversation holding a copy of the branch from the root to `message_id` (title, model
    /// and system prompt copied, or `title` from the body). 404 for another user's conversation or a
    /// message not in it; 409 while a message on that branch is streaming.
    package func fork(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let conversation = try existing(request, caller)
        let body = try JSONBody(request)
        let messageID = try body.requiredString("message_id")
        let title = try body.string("title").map(rules.title)
        let forked: Conversation
        do {
            forked = try store.forkConversation(id: conversation.id, ownedBy: caller.userID, at: messageID, title: title)
        } catch {
            if case .notFound = error {
                throw HTTPError(status: 404, code: "not_found", message: "No message \(messageID) in this conversation.")
            }
            throw error
        }
        feed.conversationCreated(forked)
        let branch = try store.currentBranch(conversationID: forked.id)
        let files = try store.messageFiles(messageIDs: branch.filter { $0.message.role == .user }.map(\.message.id))
        return .json(ConversationResource(forked, messages: branch.map {
                                              MessageResource($0.message, siblings: $0.siblings, files: files[$0.message.id] ?? [])
                                          },
                                          usage: try usage(of: forked.id)),
                     status: 201)
    }

    /// A `true`/`false` query parameter; nil when absent, 400 naming it otherwise.
    private static func flag(_ request: HTTPRequest, _ name: String) throws(HTTPError) -> Bool? {
        switch request.query[name] {
        case nil: return nil
        case "true": return true
        case "false": return false
        default:
            throw HTTPError(status: 400, code: "invalid_request", message: "'\(name)' must be true or false.")
        }
    }

    /// `temperature`, `top_p` and `max_tokens`, checked against PARLEY_MAX_TOKENS_LIMIT.
    private var settingsFields: SettingsFields { SettingsFields(maxTokensLimit: rules.limits.maxTokensLimit) }

    /// The token totals of a conversation already read as the caller's.
    private func usage(of conversationID: String) throws -> TokenUsage {
        try store.usage(conversationIDs: [conversationID])[conversationID] ?? TokenUsage()
    }

    /// The caller's conversation named in the path; another user's answers 404 like a missing one.
    private func existing(_ request: HTTPRequest, _ caller: Caller) throws -> Conversation {
        guard let conversation = try store.conversation(id: try request.parameter("id"), ownedBy: caller.userID) else {
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
