/// The answers an upload can get from the server itself (its handler may add its own).
extension HTTPError {
    /// More uploads are being received than `HTTPServerConfiguration.maxConcurrentUploads` allows.
    public static let uploadsBusy = HTTPError(
        status: 503, code: "busy", message: "Too many uploads at once; try again shortly.",
        headers: [Header("Retry-After", "1")])
    /// A multipart body without a `file` field.
    public static let missingFile = HTTPError(
        status: 400, code: "missing_file", message: "The multipart body has no 'file' field.")
    /// A multipart body with more than one `file` field: which one was meant is not guessed.
    public static let multipleFiles = HTTPError(
        status: 400, code: "multiple_files", message: "The multipart body has more than one 'file' field.")
    /// The multipart framing is broken or ends early (no closing boundary).
    public static let invalidMultipart = HTTPError(
        status: 400, code: "invalid_multipart", message: "The multipart body is malformed or incomplete.")
    /// The disk holding the upload directory is full.
    public static let insufficientStorage = HTTPError(
        status: 507, code: "insufficient_storage", message: "The server has no room for this upload now.")
}
