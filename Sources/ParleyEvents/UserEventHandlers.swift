import ParleyAPI
import ParleyGeneration
import ParleyHTTP
import ParleyStore

/// `GET /api/events`: a tab's one long-lived stream. It carries the user's notifications (conversations
/// created, updated, deleted; turns; replies started and finished) and, with `?follow=<message id>`,
/// that reply's events exactly as `GET /api/messages/{id}/stream` sends them, so a tab needs one
/// connection however many replies it shows in turn (browsers allow 6 per host across all tabs).
///
/// Why a query parameter, not a POST that changes what a stream follows: the URL then says all a
/// connection serves, EventSource's own reconnect resumes it as is, and the server keeps no stream
/// registry beyond the user's channel (and `OpenStreams`, which counts and ends streams of every kind).
/// Changing what is followed costs one reconnect, which carries the notification part of the last id,
/// so no notification is lost or repeated.
package struct UserEventHandlers: Sendable {
    let store: Store
    let generations: Generations
    let hub: UserEventHub
    /// Shared with `MessageHandlers`: the same snapshot frames and the same turn per message.
    let snapshotFrames: SnapshotFrameCache
    let subscriptions: SubscriptionQueue
    /// Bounds the caller's open streams, and ends those whose credential ends.
    let streams: OpenStreams

    package init(store: Store, generations: Generations, hub: UserEventHub, snapshotFrames: SnapshotFrameCache, subscriptions: SubscriptionQueue, streams: OpenStreams) {
        self.store = store
        self.generations = generations
        self.hub = hub
        self.snapshotFrames = snapshotFrames
        self.subscriptions = subscriptions
        self.streams = streams
    }

    package func events(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let encoder = EventStreamEncoder(mode: try ReplySubscription.mode(request))
        let resumed = try ReplySubscription.lastEventID(request, expected: "an id of this stream (S, S.R or S.done)",
                                                        UserEventID.init)
        let followed = try followedMessage(request, caller)
        // A reply part without `follow` means nothing: the stream follows no reply.
        let position = UserEventID(notification: resumed?.notification ?? 0,
                                   reply: followed == nil ? .none : resumed?.reply ?? .none)
        let ticket = try streams.admit(caller, .stream)
        let channel = hub.channel(for: caller.userID)
        let snapshotFrames = snapshotFrames
        let reply = ReplySubscription(generations: generations, subscriptions: subscriptions)
        return HTTPResponse(status: 200, headers: [], body: .eventStream { writer in
            ticket.attach(writer)
            let stream = UserEventStream(writer: writer, encoder: encoder, snapshotFrames: snapshotFrames,
                                         position: position)
            let token = channel.attach(stream, after: resumed?.notification)
            // Not synchronously: a close can happen inside a write made under the channel's lock.
            writer.onClose { Task { channel.detach(token) } }
            guard let followed else { return }
            let after: Int64?
            switch stream.reply {
            case .done: return  // its `done` was delivered before the reconnect
            case .at(let id): after = id
            case .none: after = nil
            }
            Task {
                do {
                    _ = try await reply.follow(followed, after: after, writer: writer) { events in
                        stream.deliver(events)
                    }
                } catch {
                    // The message went away (deleted) between the check above and now.
                    stream.replyFailed(code: .notFound, message: "The message no longer exists.")
                }
            }
        })
    }

    /// The caller's message named by `?follow=`; another user's answers 404 like a missing one.
    private func followedMessage(_ request: HTTPRequest, _ caller: Caller) throws -> String? {
        guard let follow = request.query["follow"] else { return nil }
        guard !follow.isEmpty else {
            throw HTTPError(status: 400, code: "invalid_request", message: "'follow' must be a message id.")
        }
        guard let message = try store.message(id: follow, ownedBy: caller.userID) else {
            throw APIErrors.messageNotFound
        }
        return message.id
    }
}
