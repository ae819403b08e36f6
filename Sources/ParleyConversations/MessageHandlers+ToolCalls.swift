import Foundation
import ParleyAPI
import ParleyHTTP
import ParleyPrimitives
import ParleyStore

/// A reply's tool calls: the user's decision on one that asks (`POST /api/messages/{id}/tool_calls/{call_id}`)
/// and the bytes of an image or audio item of a result (`GET .../content/{index}`).
extension MessageHandlers {
    /// Records `{"decision":"approve"|"deny","remember":false}` on one call, once (409 after). When it was the
    /// round's last undecided call, the reply resumes like a continue (same message, `streaming`, event ids
    /// above the last): the answer is the resumed message. If resuming is refused (a cap, the model closed
    /// to the caller), the decisions stay recorded and `POST /api/messages/{id}/continue` resumes it later.
    package func decideToolCall(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let messageID = try request.parameter("id")
        let callID = try request.parameter("call_id")
        let body = try JSONBody(request)
        guard let raw = try body.string("decision"), let decision = ToolDecision(rawValue: raw) else {
            throw HTTPError(status: 400, code: "invalid_request", message: "'decision' must be \"approve\" or \"deny\".")
        }
        let remember = try body.bool("remember") ?? false
        let decided = try store.decideToolCall(messageID: messageID, callID: callID, decision: decision,
                                               ownedBy: caller.userID)
        if remember, decision == .approve, let call = decided.message.toolCalls.first(where: { $0.id == callID }) {
            try store.rememberTool(call.tool, for: caller.userID)
        }
        guard decided.undecided == 0 else { return .json(MessageResource(decided.message)) }
        let target = decided.message
        _ = try await access.replyModel(requested: nil, stored: try storedModel(target, caller), for: caller)
        try quotas.admit(caller)
        let resumed = try await generations.continueMessage(messageID: target.id, owner: caller.userID)
        feed.replyStarted(resumed, owner: caller.userID)
        return .json(MessageResource(resumed))
    }

    /// An image (or audio) item of a call's result, as its bytes with its media type, so the page shows it
    /// under a CSP that allows only 'self' images. Text items are not served here: they are text, in the
    /// message's `parts`.
    package func toolContent(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let message = try existing(request, caller)
        let callID = try request.parameter("call_id")
        guard let index = Int(try request.parameter("index")), index >= 0 else {
            throw HTTPError(status: 400, code: "invalid_request", message: "'index' must be a non-negative integer.")
        }
        guard let call = message.toolCalls.first(where: { $0.id == callID }) else {
            throw HTTPError(status: 404, code: "not_found", message: "No such tool call.")
        }
        guard let items = call.result?.content, index < items.count else {
            throw HTTPError(status: 404, code: "not_found", message: "No such content item.")
        }
        let item = items[index]
        guard let kind = item["type"]?.stringValue, kind == "image" || kind == "audio",
              let mime = item["mimeType"]?.stringValue, Self.servable(mime, kind: kind),
              let data = item["data"]?.stringValue, let bytes = Data(base64Encoded: data) else {
            throw HTTPError(status: 404, code: "not_found", message: "That content item is not an image or audio.")
        }
        // (`X-Content-Type-Options: nosniff` is on every answer already.)
        return HTTPResponse(status: 200, headers: [("Content-Type", mime),
                                                   ("Content-Security-Policy", "default-src 'none'; sandbox"),
                                                   ("Cache-Control", "private, max-age=3600")],
                            body: .bytes(Array(bytes)))
    }

    /// Only raster images and audio are served: never SVG or anything a browser would run.
    static func servable(_ mime: String, kind: String) -> Bool {
        let allowed: Set<String> = kind == "image"
            ? ["image/png", "image/jpeg", "image/gif", "image/webp"]
            : ["audio/mpeg", "audio/wav", "audio/ogg", "audio/webm"]
        return allowed.contains(mime.lowercased())
    }
}
