import Foundation

/// What an upload route's handler receives: the file's bytes on disk, and what the client said about
/// them. Everything here but `file` and `byteCount` comes from the client as sent: `filename` is not
/// sanitised (it may hold `../`, control characters or nothing useful; the code that stores or
/// serves the name must clean it) and `contentType` is informative only (decide by the bytes).
public struct UploadedBody: Sendable {
    /// A temp file holding exactly the file's bytes. Deleted when the handler returns.
    public var file: URL
    /// The multipart part's `filename`, or the `filename` query parameter of a raw body; nil if absent.
    /// Bytes that are not UTF-8 are replaced (U+FFFD); nothing else is changed.
    public var filename: String?
    /// The part's `Content-Type` (multipart) or the request's (raw body), as declared.
    public var contentType: String?
    /// The file's size in bytes.
    public var byteCount: Int
    /// What the route's `UploadInspector` made of the bytes as they arrived; nil without one.
    public var inspection: (any Sendable)?

    public init(file: URL, filename: String?, contentType: String?, byteCount: Int, inspection: (any Sendable)? = nil) {
        self.file = file
        self.filename = filename
        self.contentType = contentType
        self.byteCount = byteCount
        self.inspection = inspection
    }
}
