import Foundation
import ParleyAPI
import ParleyGeneration
import ParleyHTTP

/// An error of the OpenAI-compatible endpoint, in OpenAI's shape and with its status codes:
/// `{"error":{"message","type","param","code"}}`. Official clients pick their exception by the
/// status (401 `AuthenticationError`, 404 `NotFoundError`, 429 `RateLimitError`…), so Parley's own
/// errors are mapped here, once, onto those statuses.
package struct OpenAIError: Error {
    /// OpenAI's `type`: what kind of failure it is.
    enum Kind: String {
        case invalidRequest = "invalid_request_error"
        case authentication = "authentication_error"
        case permission = "permission_error"
        case notFound = "not_found_error"
        case rateLimit = "rate_limit_error"
        case server = "server_error"
    }

    var status: Int
    var message: String
    var kind: Kind
    var param: String?
    var code: String?
    var headers: [HTTPError.Header] = []

    static func invalid(_ message: String, param: String?) -> OpenAIError {
        OpenAIError(status: 400, message: message, kind: .invalidRequest, param: param, code: "invalid_request")
    }

    /// A parameter the model's provider cannot honour: refused by name rather than ignored.
    static func unsupported(_ param: String, model: String) -> OpenAIError {
        OpenAIError(status: 400, message: "The model '\(model)' cannot honour '\(param)': Parley refuses it rather "
                        + "than ignore it (see docs/api.md, OpenAI-compatible endpoint).",
                    kind: .invalidRequest, param: param, code: "unsupported_parameter")
    }

    static func modelNotFound(_ model: String) -> OpenAIError {
        OpenAIError(status: 404, message: "The model '\(model)' does not exist or you do not have access to it "
                        + "(see GET /v1/models).",
                    kind: .invalidRequest, param: "model", code: "model_not_found")
    }

    static let conversationNotFound = OpenAIError(
        status: 404, message: "No such conversation (X-Parley-Conversation).", kind: .invalidRequest,
        param: nil, code: "conversation_not_found")

    /// Any error a handler or the layers below it threw, as OpenAI would have said it.
    package static func from(_ error: Error) -> OpenAIError {
        if let error = error as? OpenAIError { return error }
        guard let http = APIErrors.map(error) as? HTTPError else {
            return OpenAIError(status: 500, message: "Internal server error.", kind: .server, param: nil,
                               code: "internal")
        }
        // A model no provider offers is OpenAI's 404 `model_not_found`, told by its type, not its text.
        if case GenerationError.unknownModel = error { return modelRefused(http.message) }
        switch (http.status, http.code) {
        case (401, _):
            return OpenAIError(status: 401, message: "Invalid API key: send a Parley API token as "
                                   + "'Authorization: Bearer <token>' (POST /api/tokens makes one).",
                               kind: .authentication, param: nil, code: "invalid_api_key")
        case (_, "model_not_allowed"):
            return modelRefused(http.message)
        case (403, _):
            return OpenAIError(status: 403, message: http.message, kind: .permission, param: nil, code: http.code)
        case (404, _):
            return OpenAIError(status: 404, message: http.message, kind: .invalidRequest, param: nil, code: http.code)
        case (429, _):
            return OpenAIError(status: 429, message: http.message, kind: .rateLimit, param: nil, code: http.code,
                               headers: http.headers)
        case (500..., _):
            return OpenAIError(status: http.status, message: http.message, kind: .server, param: nil, code: http.code,
                               headers: http.headers)
        default:
            return OpenAIError(status: http.status, message: http.message, kind: .invalidRequest, param: nil,
                               code: http.code, headers: http.headers)
        }
    }

    /// A model the caller may not use, or that no provider offers: 404 as OpenAI says it.
    private static func modelRefused(_ message: String) -> OpenAIError {
        OpenAIError(status: 404, message: message, kind: .invalidRequest, param: "model", code: "model_not_found")
    }

    /// The error object, as a response body or as the data of a stream's error chunk.
    var json: String {
        "{\"error\":{\"message\":\(JSONString.literal(message)),\"type\":\(JSONString.literal(kind.rawValue)),"
            + "\"param\":\(param.map(JSONString.literal) ?? "null"),\"code\":\(code.map(JSONString.literal) ?? "null")}}"
    }

    package var response: HTTPResponse {
        HTTPResponse(status: status,
                     headers: [("Content-Type", "application/json; charset=utf-8")] + headers.map { ($0.name, $0.value) },
                     body: .bytes(Array(json.utf8)))
    }
}
