import ParleyHTTP
import ParleyMedia

/// The answers of the files API: each refusal of a file says what was found and what is accepted.
package enum FileErrors {
    /// What `MediaProcessor` refused, as the API answers it.
    static func http(_ error: MediaError) -> HTTPError {
        switch error {
        case .empty:
            HTTPError(status: 400, code: "empty_file", message: "The file is empty.")
        case .unsupported(let found):
            HTTPError(status: 415, code: "unsupported_file",
                      message: "This file is \(found). Parley takes PNG, JPEG, GIF and WebP images, PDFs, and UTF-8 "
                        + "text (plain, Markdown, CSV, JSON, source code).")
        case .tooManyPixels(let pixels):
            HTTPError(status: 400, code: "image_too_large",
                      message: "The image has \(pixels) pixels (frames counted); decode it smaller first.")
        case .tooManyPages(let pages):
            HTTPError(status: 400, code: "too_many_pages", message: "The PDF has too many pages (\(pages)).")
        case .notUTF8:
            HTTPError(status: 400, code: "invalid_text", message: "The text is not valid UTF-8: save it as UTF-8 and upload it again.")
        case .invalidJSON(let why):
            HTTPError(status: 400, code: "invalid_text", message: "The JSON file does not parse: \(why)")
        case .unreadable(let why):
            HTTPError(status: 400, code: "invalid_file", message: "The file cannot be read: \(why)")
        case .timeout:
            HTTPError(status: 400, code: "invalid_file", message: "The file took too long to read; it may be damaged.")
        case .busy:
            HTTPError(status: 503, code: "busy", message: "Too many files are being processed; try again shortly.",
                      headers: [HTTPError.Header("Retry-After", "1")])
        }
    }

    static func quotaExceeded(limit: Int64) -> HTTPError {
        HTTPError(status: 413, code: "quota_exceeded",
                  message: "Your files would take more than \(limit) bytes (PARLEY_MAX_USER_FILE_BYTES); delete some first.")
    }

    /// 400 `model_cannot_see_images`: images go only to models that are sent them (PARLEY_VISION_MODELS),
    /// refused before anything is sent rather than failed later by the provider.
    package static func modelCannotSeeImages(_ modelID: String) -> HTTPError {
        HTTPError(status: 400, code: "model_cannot_see_images",
                  message: "The model '\(modelID)' is not sent images (PARLEY_VISION_MODELS): choose a model "
                      + "that can see them, or send the message without its images.")
    }

    static let unknownVariant = HTTPError(status: 400, code: "invalid_request", message: "'variant' must be 'thumb' or absent.")
    static let noThumbnail = HTTPError(status: 404, code: "not_found", message: "This file has no thumbnail.")
}
