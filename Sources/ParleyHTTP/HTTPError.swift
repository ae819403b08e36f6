/// An error a handler throws to answer with a specific status. The server renders it as
/// `{"error":{"code":...,"message":...}}`; any other error becomes 500 `internal` without its text.
public struct HTTPError: Error, Sendable, Equatable {
    public var status: Int
    /// Stable machine-readable code (`not_found`, `payload_too_large`, ...).
    public var code: String
    /// Human-readable text shown to the client: never put secrets or internals here.
    public var message: String
    /// Extra response headers (`Allow`, `Retry-After`, ...).
    public var headers: [Header]

    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(status: Int, code: String, message: String, headers: [Header] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    public static let notFound = HTTPError(status: 404, code: "not_found", message: "Not found.")
    public static let payloadTooLarge = HTTPError(
        status: 413, code: "payload_too_large", message: "The request body is too large.")
    public static let `internal` = HTTPError(status: 500, code: "internal", message: "Internal server error.")
    public static let serviceUnavailable = HTTPError(
        status: 503, code: "unavailable", message: "The server is shutting down.")

    public static func badRequest(_ message: String) -> HTTPError {
        HTTPError(status: 400, code: "bad_request", message: message)
    }

    public static func methodNotAllowed(allow: [String]) -> HTTPError {
        HTTPError(
            status: 405, code: "method_not_allowed", message: "Method not allowed.",
            headers: [Header("Allow", allow.joined(separator: ", "))])
    }

    /// The JSON error response.
    public var response: HTTPResponse {
        var json = "{\"error\":{\"code\":"
        json += HTTPError.jsonString(code)
        json += ",\"message\":"
        json += HTTPError.jsonString(message)
        json += "}}"
        return HTTPResponse(
            status: status,
            headers: [("Content-Type", "application/json; charset=utf-8")] + headers.map { ($0.name, $0.value) },
            body: .bytes(Array(json.utf8)))
    }

    private static func jsonString(_ text: String) -> String {
        JSONString.literal(text)
    }
}
