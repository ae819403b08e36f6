import ParleyPrimitives

/// Which image URLs a surface may show: only the caller's own Parley files, `/api/files/{id}`. An image
/// URL the model chooses could leak data to its host, and the page's CSP allows only 'self' images, so
/// https:, data: and javascript: URLs (and any other form) are refused. `isOwnFile` answers whether a
/// file id is one of the caller's live files (the store, injected: this module knows no store).
public struct ImagePolicy: Sendable {
    public static let prefix = "/api/files/"
    let isOwnFile: @Sendable (String) -> Bool
    /// True for `trusted`: a surface's bound URLs are not checked again.
    let isTrusted: Bool

    public init(isOwnFile: @escaping @Sendable (String) -> Bool) {
        self.isOwnFile = isOwnFile
        isTrusted = false
    }

    private init(trusting: Void) {
        isOwnFile = { _ in true }
        isTrusted = true
    }

    /// Accepts every well-formed file URL without asking, and skips the bound-URL check of a surface's
    /// data model (surfaces read back from the store, already checked).
    public static let trusted = ImagePolicy(trusting: ())

    /// The answers of `fault(of:)` already given, by URL, so each distinct URL is asked about once.
    struct Answers: Sendable {
        var faults: [String: String] = [:]
        var fine: Set<String> = []
    }

    /// What is wrong with `url` as an image URL, nil when it is fine.
    public func fault(of url: String) -> String? {
        guard url.hasPrefix(Self.prefix) else {
            return "an image URL must be one of your Parley files (/api/files/{id}), not '\(url.prefix(60))'"
        }
        let id = url.dropFirst(Self.prefix.count)
        guard !id.isEmpty, id.count <= 64,
              id.unicodeScalars.allSatisfy({ ($0.properties.isASCIIHexDigit || ("a"..."z").contains($0)
                  || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }) else {
            return "'\(url.prefix(60))' is not a Parley file URL (/api/files/{id})"
        }
        return isOwnFile(String(id)) ? nil : "'\(url.prefix(60))' is not one of your files"
    }

    /// What is wrong with a data-model value bound to an Image's URL (nil: none, or fine).
    func fault(ofBound value: JSON?) -> String? {
        var answers = Answers()
        return fault(ofBound: value, answers: &answers)
    }

    /// The same, asking about a URL only when `answers` does not hold it yet (and keeping the answer).
    func fault(ofBound value: JSON?, answers: inout Answers) -> String? {
        guard let value, value != .null else { return nil }
        guard let url = value.stringValue else { return "an image URL must be a string" }
        if answers.fine.contains(url) { return nil }
        if let known = answers.faults[url] { return known }
        let fault = fault(of: url)
        if let fault { answers.faults[url] = fault } else { answers.fine.insert(url) }
        return fault
    }
}
