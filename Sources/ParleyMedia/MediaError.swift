/// Why a file is refused. Each case is a clear 4xx (or 503 `busy`) for the API: never a crash.
/// Codable because the worker reports it to the parent as JSON.
public enum MediaError: Error, Sendable, Equatable, Codable {
    /// A 0-byte file.
    case empty
    /// Not a kind Parley takes; `found` names what it is ("a ZIP archive", "an SVG image").
    case unsupported(found: String)
    /// Width x height x frames (the value) is over `imageMaxPixels`, or, when verifying, the image is
    /// larger than an upload is stored.
    case tooManyPixels(Int)
    /// The PDF's page count, over `pdfMaxPages`.
    case tooManyPages(Int)
    /// A text file that is not valid UTF-8.
    case notUTF8
    /// A `.json` file that does not parse; the parser's reason.
    case invalidJSON(String)
    /// Truncated, corrupt, a decoder fault, or the worker killed by its resource limits.
    case unreadable(String)
    /// The worker ran past `MediaSettings.timeout` and was killed.
    case timeout
    /// Every worker busy and the queue full.
    case busy
}

extension MediaError: CustomStringConvertible {
    /// One sentence for the person who sent the file.
    public var description: String {
        switch self {
        case .empty: "the file is empty"
        case .unsupported(let found): "this kind of file is not supported: \(found)"
        case .tooManyPixels(let pixels): "the image is too large (\(pixels) pixels)"
        case .tooManyPages(let pages): "the PDF has too many pages (\(pages))"
        case .notUTF8: "the text is not valid UTF-8"
        case .invalidJSON(let why): "the JSON does not parse: \(why)"
        case .unreadable(let why): "the file cannot be read: \(why)"
        case .timeout: "the file took too long to process"
        case .busy: "too many files are being processed; try again shortly"
        }
    }
}
