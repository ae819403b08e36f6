/// Maps method + path pattern to a handler. Patterns are `/`-separated literals and `:name` captures
/// (`/api/conversations/:id/messages`); a pattern matches only paths with the same number of segments.
/// Among matching routes the first registered wins. HEAD falls back to GET (the body is not sent).
public struct Router: Sendable {
    public typealias Handler = @Sendable (HTTPRequest) async throws -> HTTPResponse
    /// A handler that answers at once without suspending (constant or in-memory answers). It runs on
    /// the HTTP worker thread and its response is queued directly: no Swift task and no MHD
    /// suspend/resume round trip, which is most of the cost of a small GET. It must not block.
    public typealias ImmediateHandler = @Sendable (HTTPRequest) throws -> HTTPResponse

    /// How a matched route answers.
    enum Action: Sendable {
        case async(Handler)
        case immediate(ImmediateHandler)
        /// The body streams to a temp file (`UploadRoute`); matched when the headers arrive.
        case upload(UploadRoute)
        /// Like `async`, with a body limit of its own instead of the server's `maxBodyBytes` (a body held
        /// in memory that may embed files); matched when the headers arrive, so a declared length over
        /// it is refused before the body is read.
        case largeBody(Handler, maxBytes: Int)
    }

    private struct Route: Sendable {
        var method: String
        var pattern: String
        var segments: [Segment]
        var action: Action
    }

    private enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    /// The outcome of matching one request.
    enum Match {
        case handler(Action, parameters: [String: String])
        /// The path exists for other methods.
        case methodNotAllowed(allow: [String])
        case noRoute
    }

    private var routes: [Route] = []
    /// Methods that have an upload route: only their requests are matched at headers time, so every
    /// other request pays nothing for uploads.
    private(set) var uploadMethods: Set<String> = []
    /// Methods that have a route with its own body limit (`largeBody`): matched at headers time too.
    private(set) var largeBodyMethods: Set<String> = []

    public init() {}

    /// Every registered method and pattern, in registration order (the OpenAPI document's test compares
    /// them with its paths).
    public var registered: [(method: String, pattern: String)] {
        routes.map { ($0.method, $0.pattern) }
    }

    public mutating func on(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        add(method, pattern, .async(handler))
    }

    /// Registers a handler that never suspends (see `ImmediateHandler`).
    public mutating func on(_ method: String, _ pattern: String, immediate handler: @escaping ImmediateHandler) {
        add(method, pattern, .immediate(handler))
    }

    /// Registers a handler whose in-memory body may be up to `maxBodyBytes` (instead of the server's
    /// `HTTPServerConfiguration.maxBodyBytes`): for a route whose JSON embeds files. Not for GET or HEAD.
    public mutating func on(_ method: String, _ pattern: String, maxBodyBytes: Int, _ handler: @escaping Handler) {
        let method = method.uppercased()
        precondition(method != "GET" && method != "HEAD", "a body limit needs a method with a body")
        largeBodyMethods.insert(method)
        add(method, pattern, .largeBody(handler, maxBytes: maxBodyBytes))
    }

    /// Registers a route whose body streams to a temp file instead of memory (see `UploadRoute`).
    /// Not for GET or HEAD, which carry no body.
    public mutating func on(_ method: String, _ pattern: String, upload route: UploadRoute) {
        let method = method.uppercased()
        precondition(method != "GET" && method != "HEAD", "an upload route needs a method with a body")
        uploadMethods.insert(method)
        add(method, pattern, .upload(route))
    }

    private mutating func add(_ method: String, _ pattern: String, _ action: Action) {
        let segments = pattern.split(separator: "/", omittingEmptySubsequences: true).map { piece -> Segment in
            piece.hasPrefix(":") ? .parameter(String(piece.dropFirst())) : .literal(String(piece))
        }
        routes.append(Route(method: method.uppercased(), pattern: pattern, segments: segments, action: action))
    }

    /// `segments` are the request path's percent-decoded segments.
    func match(method: String, segments: [String]) -> Match {
        var allowed: [String] = []
        var fallback: (Action, [String: String])?
        for route in routes where route.segments.count == segments.count {
            guard let parameters = Router.bind(route.segments, to: segments) else { continue }
            if route.method == method { return .handler(route.action, parameters: parameters) }
            if method == "HEAD", route.method == "GET", fallback == nil { fallback = (route.action, parameters) }
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        if let fallback { return .handler(fallback.0, parameters: fallback.1) }
        if allowed.isEmpty { return .noRoute }
        if allowed.contains("GET"), !allowed.contains("HEAD") { allowed.append("HEAD") }
        return .methodNotAllowed(allow: allowed)
    }

    private static func bind(_ pattern: [Segment], to segments: [String]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (part, segment) in zip(pattern, segments) {
            switch part {
            case .literal(let text): if text != segment { return nil }
            case .parameter(let name): parameters[name] = segment
            }
        }
        return parameters
    }
}
