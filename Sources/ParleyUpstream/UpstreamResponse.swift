/// The head of an upstream response, available as soon as the status line and headers are in.
///
/// `body` yields bytes as they arrive (never the whole body buffered first). Dropping the stream or
/// cancelling the task iterating it aborts the transfer and closes the connection at once. The stream
/// throws `UpstreamError` when the transfer fails after the headers.
public struct UpstreamResponse: Sendable {
    public let status: Int
    /// Header names lower-cased; repeated headers are joined with ", ".
    public let headers: [String: String]
    public let body: AsyncThrowingStream<[UInt8], Error>

    public init(status: Int, headers: [String: String], body: AsyncThrowingStream<[UInt8], Error>) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
