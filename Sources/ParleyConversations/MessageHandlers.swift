import Foundation
import ParleyAPI
import ParleyEvents
import ParleyFiles
import ParleyGeneration
import ParleyHTTP
import ParleyProviders
import ParleyQuotas
import ParleyStore

/// Messages: send (starts a generation), the resumable event stream, stop, regenerate, continue.
package struct MessageHandlers: Sendable {
    let store: Store
    let generations: Generations
    let providers: ProviderRegistry
    let rules: FieldRules
    let access: ModelAccess
    let quotas: Quotas
    /// Tells the caller's other tabs of turns and replies.
    let feed: UserEventFeed
    /// Names a conversation after its first answer.
    let titler: ConversationTitler
    /// Bounds the caller's open streams, and ends those whose credential ends.
    let streams: OpenStreams
    /// How many files one message may carry.
    let files: FileSettings

    package init(store: Store, generations: Generations, providers: ProviderRegistry, rules: FieldRules, access: ModelAccess, quotas: Quotas, feed: UserEventFeed, titler: ConversationTitler, streams: OpenStreams, files: FileSettings = FileSettings()) {
        self.store = store
        self.generations = generations
        self.providers = providers
        self.rules = rules
        self.access = access
        self.quotas = quotas
        self.feed = feed
        self.titler = titler
        self.streams = streams
        self.files = files
    }
    /// Snapshot frames shared by the streams that get the same snapshot.
    package let snapshotFrames = SnapshotFrameCache()
    /// A reply's batches encoded once for the streams in the same mode.
    package let batchFrames = BatchFrameCache()
    /// One subscription at a time per message, so snapshots built from the store do not pile up.
    package let subscriptions = SubscriptionQueue()

    package func models(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let models = await access.models(for: caller)
        return .json(ModelListResource(models: models.map {
            ModelListResource.Model(id: $0.id, provider: $0.provider, label: $0.label,
                                    vision: providers.canSeeImages($0.id))
        }))
    }

    package func send(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let conversationID = try request.parameter("id")
        guard let conversation = try store.conversation(id: conversationID, ownedBy: caller.userID) else {
            throw APIErrors.conversationNotFound
        }
        let turn = try await admitTurn(JSONBody(request), conversationID: conversationID,
                                       storedModel: conversation.model, caller)
        let started = try await beginTurn(turn, in: conversation, caller)
        return .json(announceTurn(started, of: turn, in: conversation, caller), status: 201)
    }

    package func show(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let message = try existing(request, caller)
        return .json(MessageResource(message, files: message.role == .user ? try store.messageFiles(messageID: message.id) : []))
    }

    package func stop(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let message = try await generations.stop(messageID: try existing(request, caller).id)
        return .json(MessageResource(message))
    }

    package func regenerate(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let target = try existing(request, caller)
        let model = try await access.replyModel(requested: requestedModel(JSONBody(request)),
                                                stored: storedModel(target, caller), for: caller)
        if try branchHasImages(target) { try await requireVision(model ?? storedModel(target, caller)) }
        try quotas.admit(caller)
        let message = try await generations.regenerate(messageID: target.id, model: model, owner: caller.userID)
        feed.replyStarted(message, owner: caller.userID)
        return .json(MessageResource(message), status: 201)
    }

    package func continueMessage(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let target = try existing(request, caller)
        // A continue runs with the message's own model: refused (not swapped) once it is closed to the caller.
        _ = try await access.replyModel(requested: nil, stored: storedModel(target, caller), for: caller)
        try quotas.admit(caller)
        let message = try await generations.continueMessage(messageID: target.id, owner: caller.userID)
        feed.replyStarted(message, owner: caller.userID)
        return .json(MessageResource(message))
    }

    /// `text/event-stream` of the message: the missed events or a snapshot, then live events until `done`.
    package func stream(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        // Only the id outlives this line: the stream's closures would otherwise keep the whole message
        // (a 1 MB reply) alive per waiting subscriber, 400 of them at once when 400 clients connect.
        let messageID = try existing(request, caller).id
        let encoder = EventStreamEncoder(mode: try ReplySubscription.mode(request))
        let lastEventID = try ReplySubscription.lastEventID(request, expected: "an event id") { raw in
            Int64(raw).flatMap { $0 >= 0 ? $0 : nil }
        }
        let ticket = try streams.admit(caller, .stream)
        let snapshotFrames = snapshotFrames
        let batchFrames = batchFrames
        let reply = ReplySubscription(generations: generations, subscriptions: subscriptions)
        return HTTPResponse(status: 200, headers: [], body: .eventStream { writer in
            ticket.attach(writer)
            Task {
                do {
                    let following = try await reply.follow(messageID, after: lastEventID, writer: writer) { events in
                        let pieces = encoder.pieces(events, sharing: snapshotFrames, batches: batchFrames)
                        if !pieces.isEmpty, !writer.write(contentsOf: pieces) { return false }
                        if events.contains(where: \.isDone) {
                            writer.finish()
                            return false
                        }
                        return !writer.isClosed
                    }
                    // Everything was delivered (a finished reply, or a resume from its `done`).
                    if !following { writer.finish() }
                } catch {
                    // The message went away (deleted) between the check above and now.
                    writer.write(encoder.encode([.failure(code: .notFound, message: "The message no longer exists.")]))
                    writer.finish()
                }
            }
        })
    }

    /// Whether any user message the answer `target` replies to carries an image (its conversation's
    /// current branch: where a regenerate is asked from).
    private func branchHasImages(_ target: Message) throws -> Bool {
        let users = try store.currentBranch(conversationID: target.conversationID)
            .filter { $0.message.role == .user }.map(\.message.id)
        return try store.messageFiles(messageIDs: users).values.contains { $0.contains { $0.kind == .image } }
    }

    /// An edit (a send with `parent_id`, no `attachments`) keeps the files of the message it replaces:
    /// the current branch's user message under that parent. Files deleted since are not carried on.
    func editedFiles(_ conversationID: String, parentID: String?, _ caller: Caller) throws -> [String] {
        let branch = try store.currentBranch(conversationID: conversationID)
        guard let replaced = branch.first(where: { $0.message.role == .user && $0.message.parentID == parentID }) else {
            return []
        }
        return try store.messageFiles(messageID: replaced.message.id).map(\.id).filter { id in
            (try? store.liveFiles(ids: [id], ownedBy: caller.userID)) != nil
        }
    }

    /// 400 `model_cannot_see_images` unless the model that will answer (`named`, else the default) is
    /// sent images (PARLEY_VISION_MODELS): refused now, not failed later by the provider.
    func requireVision(_ named: String?) async throws {
        var modelID = named ?? ""
        if modelID.isEmpty { modelID = await providers.defaultModelID() }
        guard providers.canSeeImages(modelID) else { throw FileErrors.modelCannotSeeImages(modelID) }
    }

    /// The body's `model`, checked by the same rules as a conversation's (nil: the default).
    func requestedModel(_ body: JSONBody) async throws -> String? {
        guard let requested = try body.string("model") else { return nil }
        return try await rules.model(requested)
    }

    /// The model a regenerate or continue of `message` uses when none is asked for: the message's own,
    /// else its conversation's.
    func storedModel(_ message: Message, _ caller: Caller) throws -> String? {
        if let model = message.model, !model.isEmpty { return model }
        return try store.conversation(id: message.conversationID, ownedBy: caller.userID)?.model
    }

    /// The caller's message named in the path; another user's answers 404 like a missing one.
    func existing(_ request: HTTPRequest, _ caller: Caller) throws -> Message {
        guard let message = try store.message(id: try request.parameter("id"), ownedBy: caller.userID) else {
            throw APIErrors.messageNotFound
        }
        return message
    }
}

/// `POST /api/conversations/{id}/messages` answers with both new messages (and `POST /api/conversations`
/// with a `message`, beside the conversation).
struct TurnResource: Encodable {
    let userMessage: MessageResource
    let assistantMessage: MessageResource

    enum CodingKeys: String, CodingKey {
        case userMessage = "user_message"
        case assistantMessage = "assistant_message"
    }
}

/// `GET /api/models`. `vision`: the model is sent images (PARLEY_VISION_MODELS; the demo always).
struct ModelListResource: Encodable {
    struct Model: Encodable {
        let id: String
        let provider: String
        let label: String
        let vision: Bool
    }

    let models: [Model]
}
