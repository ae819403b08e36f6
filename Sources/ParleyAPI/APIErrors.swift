import Foundation
import ParleyGeneration
import ParleyHTTP
import ParleyStore

/// Maps the errors of the store and of generations to the API's HTTP errors, in one place.
package enum APIErrors {
    package static let conversationNotFound = HTTPError(status: 404, code: "not_found", message: "No such conversation.")
    package static let messageNotFound = HTTPError(status: 404, code: "not_found", message: "No such message.")
    package static let unauthenticated = HTTPError(status: 401, code: "unauthenticated", message: "Sign in first.")
    package static let invalidCredentials = HTTPError(status: 401, code: "invalid_credentials",
                                              message: "Wrong username or password.")
    /// The database (PostgreSQL) cannot be reached or is shutting down: try again; nothing was sent upstream.
    package static let storeUnavailable = HTTPError(
        status: 503, code: "store_unavailable", message: "The database is unavailable; try again shortly.",
        headers: [HTTPError.Header("Retry-After", "2")])
    /// The limits nodes share (PARLEY_REDIS_URL) cannot be counted: a start or a sign-in is refused
    /// (fail closed) rather than let through uncounted; replies already running go on.
    package static let limitsUnavailable = HTTPError(
        status: 503, code: "limits_unavailable", message: "Shared limits cannot be checked (Redis is unreachable); try again shortly.",
        headers: [HTTPError.Header("Retry-After", "2")])
    package static let forbidden = HTTPError(status: 403, code: "forbidden", message: "Only an admin may do this.")

    /// The API speaks JSON only. A body, or a declared type, that is not `application/json` is refused:
    /// an HTML form or a `no-cors` fetch from another site can only send form and text types.
    package static func requireJSON(_ request: HTTPRequest) throws(HTTPError) {
        let declared = request.header("Content-Type")
        guard request.method != "GET", request.method != "HEAD", !request.body.isEmpty || declared != nil else {
            return
        }
        let media = declared?.split(separator: ";", maxSplits: 1).first?
            .trimmingCharacters(in: .whitespaces).lowercased()
        guard media == "application/json" else {
            throw HTTPError(status: 415, code: "unsupported_media_type",
                            message: "Send the request body as JSON with 'Content-Type: application/json'.")
        }
    }

    package static func map(_ error: Error) -> Error {
        switch error {
        case let error as GenerationError:
            return map(error)
        case StoreError.notFound(let missing):
            return HTTPError(status: 404, code: "not_found", message: "No such \(missing).")
        case StoreError.invalidCursor:
            return HTTPError(status: 400, code: "invalid_cursor", message: "'cursor' is not a cursor this server issued.")
        case StoreError.conflict(let why):
            return HTTPError(status: 409, code: "conflict", message: why)
        case let error as StoreError where error.isUnavailable:
            return storeUnavailable
        default:
            return error
        }
    }

    private static func map(_ error: GenerationError) -> HTTPError {
        switch error {
        case .messageNotFound: messageNotFound
        case .conversationNotFound: conversationNotFound
        case .notAnAssistantMessage:
            HTTPError(status: 400, code: "not_assistant_message", message: "This works on assistant messages only.")
        case .alreadyStreaming:
            HTTPError(status: 409, code: "already_streaming", message: "The message is still streaming.")
        case .unknownModel(let model):
            HTTPError(status: 400, code: "unknown_model",
                      message: "'model' \(model) is not offered by this server (see GET /api/models).")
        case .tooManyGenerations(let limit):
            HTTPError(status: 429, code: "too_many_generations",
                      message: "At most \(limit) replies may stream at once (PARLEY_MAX_GENERATIONS); "
                        + "try again when one ends.",
                      headers: [HTTPError.Header("Retry-After", "1")])
        case .tooManyGenerationsForUser(let limit):
            HTTPError(status: 429, code: "too_many_generations",
                      message: "At most \(limit) of your replies may stream at once (PARLEY_MAX_GENERATIONS_PER_USER); "
                        + "try again when one ends.",
                      headers: [HTTPError.Header("Retry-After", "1")])
        case .invalidParent(let why):
            HTTPError(status: 400, code: "invalid_parent", message: why)
        case .shuttingDown:
            HTTPError(status: 503, code: "shutting_down", message: "The server is shutting down; try again shortly.",
                      headers: [HTTPError.Header("Retry-After", "5")])
        case .ownerDisabled: unauthenticated
        case .awaitingApproval:
            HTTPError(status: 409, code: "awaiting_approval",
                      message: "The reply waits for a decision on its tool calls (POST /api/messages/{id}/tool_calls/{call_id}).")
        }
    }
}
