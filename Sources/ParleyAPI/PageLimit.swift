import ParleyHTTP

/// The `?limit=` of a paginated list (conversations, files): one rule, so every list refuses the same
/// values with the same message rather than cutting a bad one silently.
package enum PageLimit {
    /// Items on a page when `limit` is not given.
    package static let defaultValue = 50
    /// The largest `limit` a client may ask for.
    package static let maxValue = 200

    /// The request's `limit`, or the default; anything but an integer in 1...`maxValue` is a 400.
    package static func from(_ request: HTTPRequest) throws(HTTPError) -> Int {
        guard let raw = request.query["limit"] else { return defaultValue }
        guard let value = Int(raw), (1...maxValue).contains(value) else {
            throw HTTPError(status: 400, code: "invalid_request",
                            message: "'limit' must be an integer from 1 to \(maxValue).")
        }
        return value
    }
}
