import Foundation
import ParleyAPI
import ParleyEvents
import ParleyFiles
import ParleyGeneration
import ParleyHTTP
import ParleyMarkdown
import ParleyProviders
import ParleyQuotas
import ParleyStore

/// Module ParleyOpenAICompat: OpenAI's chat-completions shapes over Parley's own conversations and
/// replies. It must never know the page's API shapes (`MessageResource` and its events).
///
/// The OpenAI-compatible endpoint for scripts: `POST /v1/chat/completions` (streaming and not) and
/// `GET /v1/models`. Callers are found as for every API route (team mode: a Parley API token as
/// `Authorization: Bearer`; local mode: any key or none). Errors are in OpenAI's shape (`OpenAIError`).
///
/// Every call is a conversation of the caller's, so history, quotas, search and export apply:
/// - without `X-Parley-Conversation`, a new conversation: the system messages are its system prompt,
///   the request's `temperature`, `top_p` and `max_tokens` its settings, the turns before the last
///   user message its history (stored `complete`, without usage: Parley did not generate them), and
///   the last user message is sent;
/// - with `X-Parley-Conversation: <id>` (the caller's, else 404), the last user message is sent under
///   that conversation's current leaf; the stored branch and system prompt are the context, so the
///   request's earlier turns and system messages are not stored again, and its settings apply to
///   this call only.
/// Client tools (`tools`): offered to the model and relayed, never run (`OpenAIToolHistory`). A reply
/// that calls them ends with finish reason `tool_calls`; a request that ends with their results
/// continues that reply (stored from the request's history, or the conversation's current leaf with
/// the header), and the model's next round is the response.
/// Images and files (`image_url` data URLs, `file` parts: `OpenAIContentPart`) are checked before
/// anything is stored (`OpenAIAttachments`; images only for models that see them), stored as the
/// caller's files exactly as uploads, and attached to the user messages the call stores.
/// The answer names the conversation and the reply in `X-Parley-Conversation` and `X-Parley-Message`.
package struct OpenAIHandlers: Sendable {
    let store: Store
    let generations: Generations
    let rules: FieldRules
    let access: ModelAccess
    let quotas: Quotas
    let renderer: MarkdownRenderer
    /// PARLEY_OPENAI_KEEPALIVE_MS (zero: none).
    let keepAlive: Duration
    /// Tells the caller's tabs of the conversation and turn a call makes.
    let feed: UserEventFeed
    /// Bounds the caller's open streams (a streamed call is one), and ends those whose token ends.
    let streams: OpenStreams
    /// Which models see images (`/v1/models`' `vision`, and who may be sent one).
    let providers: ProviderRegistry
    /// Stores the files a request embeds, as uploads.
    let ingest: FileIngest

    package init(store: Store, generations: Generations, rules: FieldRules, access: ModelAccess, quotas: Quotas, renderer: MarkdownRenderer, keepAlive: Duration, feed: UserEventFeed, streams: OpenStreams, providers: ProviderRegistry, ingest: FileIngest) {
        self.store = store
        self.generations = generations
        self.rules = rules
        self.access = access
        self.quotas = quotas
        self.renderer = renderer
        self.keepAlive = keepAlive
        self.feed = feed
        self.streams = streams
        self.providers = providers
        self.ingest = ingest
    }

    static let conversationHeader = "X-Parley-Conversation"

    /// `GET /v1/models`: the models the caller may use, as OpenAI lists them, and `vision` as
    /// `/api/models` says it (an extra field, which OpenAI's clients keep).
    package func models(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let models = await access.models(for: caller)
        let data = models.map { model in
            "{\"id\":\(JSONString.literal(model.id)),\"object\":\"model\",\"created\":0,"
                + "\"owned_by\":\(JSONString.literal(model.provider)),\"vision\":\(providers.canSeeImages(model.id))}"
        }
        let json = "{\"object\":\"list\",\"data\":[" + data.joined(separator: ",") + "]}"
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json; charset=utf-8")],
                           body: .bytes(Array(json.utf8)))
    }

    /// `POST /v1/chat/completions`.
    package func chatCompletions(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let chat = try OpenAIChatRequest(request, fields: SettingsFields(maxTokensLimit: rules.limits.maxTokensLimit))
        let model: String
        do {
            model = try await rules.model(chat.model)
            try await access.require(model, for: caller)
        } catch {
            throw OpenAIError.modelNotFound(chat.model)
        }
        if let param = generations.refusal(of: chat.options, tools: chat.tools, toolTurns: chat.hasToolTurns,
                                           model: model) {
            throw OpenAIError.unsupported(param, model: chat.model)
        }
        let systemPrompt = try chat.systemPrompt.map(rules.systemPrompt)
        var existing: Conversation?
        if let id = request.header(Self.conversationHeader) {
            guard let conversation = try store.conversation(id: id, ownedBy: caller.userID) else {
                throw OpenAIError.conversationNotFound
            }
            existing = conversation
        }
        // The results of a stored reply's calls are checked before anything is stored or started.
        var answered: (leaf: String, results: [String: ToolCallResult])?
        if let existing, chat.continuesAfterToolResults, let last = chat.history.last {
            let leaf = try existing.currentLeafID.flatMap { try store.message(id: $0) }
            answered = (leaf?.id ?? "", try OpenAIToolHistory.results(of: last, for: leaf))
        }
        // The files of the user turns this call stores (its history too, in a new conversation).
        let historyFiles = existing == nil ? chat.history.filter { $0.role == .user }.map(\.files) : []
        let attachments = try OpenAIAttachments(historyFiles + [chat.files], owner: caller.userID, store: store,
                                                settings: ingest.settings)
        if attachments.hasImages, !providers.canSeeImages(model) { throw FileErrors.modelCannotSeeImages(model) }
        // Before anything is stored or started: a refused call leaves nothing behind.
        let ticket = chat.stream ? try streams.admit(caller, .stream) : nil
        try quotas.admit(caller)
        let files = try await attachments.store(ingest: ingest, owner: caller.userID, in: store)
        var fileIDs = files.fileIDs
        let sentFileIDs = fileIDs.removeLast()
        let conversationID: String
        if let existing {
            conversationID = existing.id
        } else {
            conversationID = try store.createConversation(model: model, systemPrompt: systemPrompt,
                                                          ownedBy: caller.userID, settings: chat.settings).id
        }
        let assistant: Message
        var turn: (user: Message, assistant: Message)?
        do {
            let transcript = existing == nil
                ? try store.appendTranscript(conversationID: conversationID,
                                             turns: OpenAIToolHistory.transcript(chat.history, renderer: renderer))
                : []
            for (message, ids) in zip(transcript.filter { $0.role == .user }, fileIDs) where !ids.isEmpty {
                try store.attachFiles(ids, toMessage: message.id, ownedBy: caller.userID, includingDeleted: false)
            }
            if chat.continuesAfterToolResults {
                // The model answers the results: the reply that made the calls goes on (its next round).
                let target = try answered.map { try store.recordToolResults(messageID: $0.leaf, results: $0.results).id }
                    ?? transcript.last?.id ?? ""
                assistant = try await generations.continueMessage(messageID: target, owner: caller.userID,
                                                                  settings: chat.settings, options: chat.options,
                                                                  clientTools: chat.tools)
            } else {
                let started = try await generations.send(conversationID: conversationID, placement: .afterCurrentLeaf,
                                                         content: chat.content, model: model, owner: caller.userID,
                                                         settings: chat.settings, options: chat.options,
                                                         clientTools: chat.tools, fileIDs: sentFileIDs)
                turn = started
                assistant = started.assistant
            }
        } catch {
            // A conversation made for this call is not left behind half made (no reply started), nor
            // the files it brought.
            if existing == nil { _ = try? store.deleteConversation(id: conversationID, ownedBy: caller.userID) }
            OpenAIAttachments.remove(files.created, owner: caller.userID, from: store)
            throw error
        }
        // Other tabs learn of the conversation before its turn (as for the page's own sends).
        if existing == nil, let conversation = try store.conversation(id: conversationID) {
            feed.conversationCreated(conversation)
        }
        if let turn {
            feed.turnStarted(user: turn.user, assistant: turn.assistant, owner: caller.userID)
        } else {
            feed.replyStarted(assistant, owner: caller.userID)
        }
        // A continued reply already holds the calls the request answered: the response is what follows them.
        let start = OpenAIToolHistory.responseStart(assistant.parts)
        let encoder = OpenAIChunkEncoder(id: "chatcmpl-" + assistant.id,
                                         created: Int(assistant.createdAt.timeIntervalSince1970),
                                         model: assistant.model ?? model, includeUsage: chat.includeUsage)
        let headers = [(Self.conversationHeader, conversationID), ("X-Parley-Message", assistant.id)]
        if let ticket {
            let store = store, generations = generations
            let keepAlive = keepAlive > .zero ? keepAlive : nil
            return HTTPResponse(status: 200, headers: headers, body: .eventStream { writer in
                ticket.attach(writer)
                let relay = OpenAIStreamRelay(messageID: assistant.id, encoder: encoder, writer: writer, store: store,
                                              generations: generations, keepAlive: keepAlive,
                                              before: assistant, logprobs: chat.options.logprobs == true)
                Task { await relay.start() }
            })
        }
        let message = try await finished(assistant.id)
        if let failure = Self.failure(of: message) { throw failure }
        let response = OpenAIToolHistory.response(message, from: start)
        // Read from the run just waited for (retained after its end for `retainFinished`).
        let logprobs = chat.options.logprobs == true ? await generations.logprobs(of: assistant.id) ?? [] : nil
        let body = encoder.completion(content: response.content, reasoning: response.reasoning,
                                      toolCalls: response.toolCalls, logprobs: logprobs,
                                      finishReason: OpenAIChunkEncoder.finishReason(message.finishReason),
                                      usage: ReplyUsage(message.usage))
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json; charset=utf-8")] + headers,
                            body: .bytes(body))
    }

    /// Waits for the reply's `done` and returns the stored message. (A call without `stream` cannot
    /// tell that its client left: the reply runs to its end, bounded by the reply limits.)
    private func finished(_ messageID: String) async throws -> Message {
        _ = try await generations.outcome(of: messageID)
        guard let message = try store.message(id: messageID) else { throw APIErrors.messageNotFound }
        return message
    }

    /// The OpenAI error for a reply that failed or was cut by a shutdown; nil for one that ended well
    /// (complete, or stopped by someone).
    static func failure(of message: Message) -> OpenAIError? {
        switch message.status {
        case .failed, .interrupted:
            return OpenAIError(status: 502, message: message.errorMessage ?? "The model's reply failed.",
                               kind: .server, param: nil, code: (message.errorCode ?? .upstreamError).rawValue)
        case .complete, .stopped, .streaming, .awaitingApproval:
            return nil
        }
    }
}
