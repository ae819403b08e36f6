import ParleyGeneration
import ParleyHTTP

/// How a stream follows one reply, for `GET /api/messages/{id}/stream` and `GET /api/events?follow=`
/// alike: the request's `mode` and `Last-Event-ID` read by one rule, and the subscription taken in the
/// message's turn (`SubscriptionQueue`) and cancelled when the stream closes. Why: the two streams had
/// their own copies, and they drifted (one accepted any `mode`, the other answered 400).
package struct ReplySubscription: Sendable {
    let generations: Generations
    let subscriptions: SubscriptionQueue

    package init(generations: Generations, subscriptions: SubscriptionQueue) {
        self.generations = generations
        self.subscriptions = subscriptions
    }

    /// Subscribes `deliver` to `messageID` once its turn comes, unless `writer` closed while it waited,
    /// and detaches it when `writer` closes. Returns false when nothing more will come: everything was
    /// delivered already (a finished reply, a resume from its `done`) or the client left. Throws
    /// `GenerationError.messageNotFound` when the message went away.
    package func follow(_ messageID: String, after lastEventID: Int64?, writer: EventStreamWriter,
                deliver: @escaping @Sendable ([GenerationEvent]) -> Bool) async throws -> Bool {
        let generations = generations
        let subscription = try await subscriptions.run(messageID) { () async throws -> Subscription? in
            // A client that left while waiting for its turn needs no snapshot.
            guard !writer.isClosed else { return nil }
            return try await generations.subscribe(messageID: messageID, after: lastEventID, deliver: deliver)
        }
        guard let subscription else { return false }
        writer.onClose { Task { await subscription.cancel() } }
        return true
    }

    // MARK: - Request

    /// `?mode=html` (the default, for the page) or `?mode=text` (raw `delta`s, for API clients); any
    /// other value is a 400.
    package static func mode(_ request: HTTPRequest) throws(HTTPError) -> EventStreamEncoder.Mode {
        switch request.query["mode"] {
        case nil, "html": return .html
        case "text": return .text
        default: throw HTTPError(status: 400, code: "invalid_request", message: "'mode' must be html or text.")
        }
    }

    /// The Last-Event-ID header (EventSource reconnects) or `?last_event_id=` (a fresh EventSource): nil
    /// when absent or empty, else `parse`'s id; one `parse` does not read is a 400 saying `expected`.
    package static func lastEventID<ID>(_ request: HTTPRequest, expected: String,
                                _ parse: (String) -> ID?) throws(HTTPError) -> ID? {
        guard let raw = request.header("Last-Event-ID") ?? request.query["last_event_id"], !raw.isEmpty else {
            return nil
        }
        guard let id = parse(raw) else {
            throw HTTPError(status: 400, code: "invalid_request", message: "'Last-Event-ID' must be \(expected).")
        }
        return id
    }
}
