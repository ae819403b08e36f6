import Foundation

/// What a handler returns. Plain bodies are sent with a Content-Length and keep-alive; event streams are
/// sent chunked and stay open until the writer finishes or the client leaves.
public struct HTTPResponse: Sendable {
    public enum Body: Sendable {
        case bytes([UInt8])
        /// Called once, on a server thread, right after the headers are queued. It must return quickly:
        /// start a task that writes, keep the writer, and call `finish()` when done.
        case eventStream(@Sendable (EventStreamWriter) -> Void)
        /// A chunked body made piece by piece as the client reads (see `PulledBody`): `next` returns the
        /// next bytes, nil at the end; a throw cuts the response off. Runs on a server thread: keep it short.
        case pulled(@Sendable () throws -> [UInt8]?)
        /// Like `pulled`, for a body whose length is known (a stored file): sent with a Content-Length
        /// instead of chunked, so clients show progress and can resume. `next` must give exactly
        /// `length` bytes in all; fewer cuts the response off.
        case sized(length: Int, @Sendable () throws -> [UInt8]?)
    }

    public var status: Int
    public var headers: [(String, String)]
    public var body: Body

    public init(status: Int = 200, headers: [(String, String)] = [], body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// JSON with the value's own `CodingKeys` (no key strategy). An encoding failure is a programming
    /// error: it is logged to stderr and answered with 500 `internal`.
    public static func json(_ value: some Encodable, status: Int = 200) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            let data = try encoder.encode(value)
            return HTTPResponse(
                status: status, headers: [("Content-Type", "application/json; charset=utf-8")],
                body: .bytes(Array(data)))
        } catch {
            FileHandle.standardError.write(Data("parley-http: JSON encoding failed: \(error)\n".utf8))
            return HTTPError.internal.response
        }
    }

    public static func text(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [("Content-Type", "text/plain; charset=utf-8")],
            body: .bytes(Array(text.utf8)))
    }

    public static func noContent() -> HTTPResponse {
        HTTPResponse(status: 204)
    }

    /// Case-insensitive lookup of the first header with this name.
    public func header(_ name: String) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }
}
