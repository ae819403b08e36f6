/// A route whose request body streams to a temp file instead of memory (`Router.on(_:_:upload:)`),
/// so a 20 MB file costs the server a file descriptor and a post-processor buffer, not 20 MB.
///
/// The body is either `multipart/form-data`, parsed by libmicrohttpd's post processor (exactly one
/// field named `file` is the file; other fields are ignored), or raw (any other `Content-Type`: the
/// body is the file and the `filename` query parameter names it).
///
/// Limits: a declared `Content-Length` over `maxBytes` (plus `multipartAllowance` for multipart
/// framing) is refused with 413 before any body byte is read. A body without one (chunked), or a
/// multipart file that turns out larger, is read and dropped up to the server's discard limit and then
/// answered 413 (libmicrohttpd 0.9.75 cannot answer mid-body); past that limit the connection is
/// closed. At most `HTTPServerConfiguration.maxConcurrentUploads` uploads are held at once: more get
/// 503 `busy` at headers time.
public struct UploadRoute: Sendable {
    /// Decides at headers time, before any body byte is read, whether the upload may proceed (sign-in,
    /// quota). It gets the request with an empty body and runs synchronously on the HTTP worker thread:
    /// it must be quick and must not block. nil admits; an error is the answer (the connection closes).
    public typealias Admit = @Sendable (HTTPRequest) -> HTTPError?
    /// Runs once the whole body is on disk. `HTTPRequest.body` is empty; the bytes are in
    /// `UploadedBody.file`, which is deleted as soon as this returns: copy or move what must outlive it.
    public typealias Handler = @Sendable (HTTPRequest, UploadedBody) async throws -> HTTPResponse
    /// Makes the inspector that sees one upload's bytes as they arrive (see `UploadInspector`).
    public typealias Inspector = @Sendable () -> any UploadInspector

    /// Bytes multipart framing may add to a `Content-Length` beyond `maxBytes`: boundary lines, part
    /// headers (a long filename) and small extra fields. The file itself is still held to `maxBytes`.
    public static let multipartAllowance = 64 * 1024

    /// The largest file accepted, in bytes.
    public var maxBytes: Int
    public var admit: Admit
    public var handler: Handler
    /// nil: the bytes are only written.
    public var inspector: Inspector?

    public init(maxBytes: Int, admit: @escaping Admit = { _ in nil }, inspector: Inspector? = nil,
                handler: @escaping Handler) {
        self.maxBytes = maxBytes
        self.admit = admit
        self.inspector = inspector
        self.handler = handler
    }
}
